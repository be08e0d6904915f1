"""The Hugging Face Hub: the one module that talks to it (push an exported folder and its card).

Calls, checked against the library's "Upload files to the Hub" guide
(https://huggingface.co/docs/hub/how-to-upstream: create a repository with `create_repo()`, then
`upload_folder()` with `repo_type="dataset"`) and against the installed 2.4 source, which also
says what our test stand-in must answer:
- `HfApi(endpoint=..., token=...)`: the client against one Hub address (settings.HUB_ENDPOINT; a
  mirror or a test stand-in) with one token (settings.HUB_TOKEN; empty: the client's own, HF_TOKEN
  or a saved login).
- `create_repo(repo_id, repo_type="dataset", private=..., exist_ok=True)`: POST /api/repos/create
  (hf_api.py), a 409 (it exists) is fine with exist_ok.
- `upload_folder(folder_path=..., repo_id=..., repo_type="dataset", commit_message=...)`: POST
  /api/datasets/{repo}/preupload/{revision} (each file "regular" or "lfs"), then one commit, POST
  /api/datasets/{repo}/commit/{revision} as NDJSON (_commit_api.py).

The token is handed to the client and never written anywhere: an error's text is cleaned of it
and of every other secret (config.scrub) before it is raised, on one line
(tests/annotation/test_push_dataset.py captures logs and output and checks). A Hub that cannot be
reached (refused connection, timeout, offline mode, a bad address) is a HubError too, never a
traceback. `make_api` is the one point tests replace.
"""

from dataclasses import dataclass
from pathlib import Path

import httpx2  # huggingface_hub 2.x's HTTP client (a requirement of it): its transport errors
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

from config.scrub import scrub

UNREACHABLE = (httpx2.TransportError, httpx2.InvalidURL, OfflineModeIsEnabled, OSError)


class HubError(Exception):
    """The Hub refused or could not be reached; the message never holds the token."""


@dataclass(frozen=True)
class Pushed:
    repo_url: str
    commit_url: str
    files: int


def push_folder(
    folder: Path, repo_id: str, *, endpoint: str, token: str | None, private: bool = False, message: str = ""
) -> Pushed:
    """Create the dataset repository if needed and upload every file of `folder` in one commit."""
    folder = Path(folder)
    if not (folder / "README.md").is_file():
        raise HubError(f"{folder} has no README.md: export with --format hf first (it writes the card)")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise HubError(f"repo_id must read OWNER/NAME, not {repo_id!r}")
    try:
        api = make_api(endpoint, token)
        repo = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=message or "Upload the dataset and its card",
        )
    except HfHubHTTPError as error:  # the Hub answered, refusing (a 401, a 404, a 5xx)
        raise HubError(_one_line(str(error), token)) from None
    except UNREACHABLE as error:
        reason = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        raise HubError(_one_line(f"could not reach the Hub ({reason})", token)) from None
    except (httpx2.HTTPError, ValueError) as error:
        raise HubError(_one_line(str(error) or type(error).__name__, token)) from None
    files = sum(1 for path in folder.rglob("*") if path.is_file())
    return Pushed(repo_url=str(repo), commit_url=commit.commit_url, files=files)


def make_api(endpoint: str, token: str | None) -> HfApi:
    """The one transport point: the Hub client against `endpoint` with `token`."""
    return HfApi(endpoint=endpoint.rstrip("/"), token=token or None)


def _one_line(text: str, token: str | None) -> str:
    """The error's text without a secret, its lines joined (the Hub's errors add a request id and
    the body on lines of their own)."""
    return " ".join(line.strip() for line in scrub(text, also=(token,)).splitlines() if line.strip())
