"""The typed client (client/, docs/api.md) against a running demo: sign in as the demo researcher,
find the demo campaign, read its progress and its study report.

    python .ci/client_smoke.py http://127.0.0.1:8765

Run by `make demo-check` after .ci/demo_smoke.py, while the demo's server and a worker are up (the
progress is the report job's figures). Exits non-zero, saying which step failed and why.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "client"))  # also without `make install`

from dialogue_curation_client import ApiError, Client, JobFailed, NotReady, SignInRefused

USERNAME, PASSWORD = "demo", "demo-researcher"
DEMO_CAMPAIGN = "Demo campaign"


def run(base: str) -> None:
    client = _signed_in(base, wait=120)
    print(f"signed in as {USERNAME} through the client")
    campaign = next((c for c in client.campaigns() if c.name == DEMO_CAMPAIGN), None)
    if campaign is None:
        raise SystemExit(f"client smoke test FAILED: no campaign named {DEMO_CAMPAIGN!r} in GET /api/campaigns/")
    progress = client.progress(campaign.id, wait=180)
    if progress.hits < 1 or progress.assignments_submitted < 1:
        raise SystemExit(f"client smoke test FAILED: the demo campaign's progress shows no work done: {progress}")
    print(
        f"{DEMO_CAMPAIGN} (id {campaign.id}, {campaign.status}): {progress.assignments_submitted} of "
        f"{progress.assignments_needed} seats done on {progress.hits} HITs (as of {progress.as_of})"
    )
    report = client.study_report(campaign.id)
    if report.table4.dialogues < 1:
        raise SystemExit(f"client smoke test FAILED: the study report counts no dialogue: {report.table4}")
    print(f"study report: {report.table4.dialogues} dialogues, Fleiss' kappa {report.table4.fleiss_kappa}")


def _signed_in(base: str, wait: float) -> Client:
    """Signed in once the server answers (it may still be starting)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return Client.sign_in(base, USERNAME, PASSWORD)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def main() -> int:
    base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
    try:
        run(base)
    except (ApiError, SignInRefused, NotReady, JobFailed, OSError, ValueError) as failure:
        print(f"client smoke test FAILED: {type(failure).__name__}: {failure}", file=sys.stderr)
        return 1
    print("client smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
