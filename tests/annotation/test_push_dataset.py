"""The hf export's dataset card, and `push_dataset` against a stand-in Hub on 127.0.0.1 that keeps
state the way the Hub documents it: repositories (created once, a second create is a 409),
preupload (each file regular), commits (NDJSON: a header, then base64 files), a token checked."""

import base64
import json
import logging
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from annotation.models import AuditEntry, TurnLabel
from annotation.record import audit
from labeling.models import AggregatedLabel
from labeling.services.adjudication import settle
from labeling.services.campaigns import create_campaign
from labeling.task_types.last_turn_label.aggregation import aggregate_campaign
from tests.conftest import REPO_ROOT
from tests.labeling.crowd_factories import make_answered_hit, make_dialogues, make_workers

pytestmark = pytest.mark.django_db
TOKEN = "hf_standin_secret_9f8e7d6c5b4a"


class StandInHub:
    """The three endpoints huggingface_hub calls to create a dataset repo and commit a folder."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.repos: dict[str, dict[str, bytes]] = {}
        self.commits: list[dict] = []
        self.validated: list[dict] = []
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # nothing to read here (the client's side lookups land here)
                hub.requests.append(f"GET {self.path}")
                return self._json(404, {"error": "not served by the stand-in"})

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hub.requests.append(self.path)
                if self.headers.get("Authorization") != f"Bearer {hub.token}":
                    return self._json(401, {"error": "Invalid credentials in Authorization header"})
                path = self.path.split("?")[0]
                if path == "/api/repos/create":
                    return self._create(json.loads(body))
                if path == "/api/validate-yaml":
                    return self._validate(json.loads(body))
                parts = path.split("/")  # /api/datasets/OWNER/NAME/(preupload|commit)/REV
                if len(parts) == 7 and parts[2] == "datasets":
                    repo = f"{parts[3]}/{parts[4]}"
                    if repo not in hub.repos:
                        return self._json(404, {"error": "Repository not found"})
                    if parts[5] == "preupload":
                        return self._preupload(json.loads(body))
                    if parts[5] == "commit":
                        return self._commit(repo, body)
                return self._json(404, {"error": f"no route {path}"})

            def _create(self, payload: dict) -> None:
                if payload.get("type") != "dataset":
                    return self._json(400, {"error": "expected a dataset"})
                repo = f"{payload['organization']}/{payload['name']}"
                if repo in hub.repos:  # the Hub's 409 names the existing repository too
                    return self._json(
                        409, {"error": "You already created this dataset repo", "url": hub.repo_url(repo)}
                    )
                hub.repos[repo] = {}
                return self._json(200, {"url": hub.repo_url(repo)})

            def _validate(self, payload: dict) -> None:
                """The card's metadata: a YAML mapping with a licence the Hub can show."""
                text = payload.get("content", "")
                header = text.split("---\n", 2)[1] if text.startswith("---\n") else ""
                front = yaml.safe_load(header) if header else None
                if payload.get("repoType") != "dataset" or not isinstance(front, dict) or "license" not in front:
                    return self._json(400, {"errors": [{"message": "metadata: a license is required"}]})
                hub.validated.append(front)
                return self._json(200, {"errors": [], "warnings": []})

            def _preupload(self, payload: dict) -> None:
                files = [
                    {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                    for f in payload["files"]
                ]
                return self._json(200, {"files": files})

            def _commit(self, repo: str, body: bytes) -> None:
                lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
                if not lines or lines[0]["key"] != "header":
                    return self._json(400, {"error": "a commit starts with its header"})
                for line in lines[1:]:
                    if line["key"] != "file":
                        return self._json(400, {"error": f"unexpected {line['key']}"})
                    hub.repos[repo][line["value"]["path"]] = base64.b64decode(line["value"]["content"])
                oid = f"{len(hub.commits) + 1:040x}"
                hub.commits.append({"repo": repo, "summary": lines[0]["value"]["summary"], "oid": oid})
                return self._json(200, {"commitUrl": f"{hub.url}/datasets/{repo}/commit/{oid}", "commitOid": oid})

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def repo_url(self, repo: str) -> str:
        return f"{self.url}/datasets/{repo}"

    def __enter__(self) -> "StandInHub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(settings, monkeypatch):
    # the suite runs with HF_HUB_OFFLINE=1 (pyproject) so nothing reaches the real Hub; this test's
    # Hub is the stand-in on 127.0.0.1, so the client may go online for it alone
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    with StandInHub(TOKEN) as stand_in:
        # the client's own side requests (an agent registry it reads for its user agent) go to
        # constants.ENDPOINT: the stand-in too, so nothing leaves 127.0.0.1
        monkeypatch.setattr(constants, "ENDPOINT", stand_in.url)
        settings.HUB_ENDPOINT = stand_in.url
        settings.HUB_TOKEN = TOKEN
        yield stand_in


@pytest.fixture
def gold(researcher, settings):
    """A campaign with a majority, an item a reviewer settled, and one left unresolved."""
    settings.DATASET_LICENSE = "cc-by-nc-4.0"
    with audit.acting_as(audit.person(researcher)):
        campaign = create_campaign("Card study")
    d = make_dialogues(3)
    answers = {d[0]: ["Angry", "Angry", "Sad"], d[1]: ["Sad", "Lonely", "Joyful"], d[2]: ["Joyful", "Joyful", "Joyful"]}
    make_answered_hit(campaign, make_workers(3), answers)
    aggregate_campaign(campaign)
    row = AggregatedLabel.objects.get(campaign=campaign, dialogue=d[1])
    settle(row, "Sad", researcher, "the reply mourns")
    return campaign


def front_matter(readme: str) -> dict:
    _, header, _ = readme.split("---\n", 2)
    return yaml.safe_load(header)


def test_the_hf_export_writes_a_card_with_hub_metadata_agreement_citation_and_the_audit_log(gold, tmp_path):
    folder = tmp_path / "hf"
    call_command("export_dataset", kind="gold", fmt="hf", out=str(folder), stdout=StringIO())
    readme = (folder / "README.md").read_text()
    meta = front_matter(readme)
    assert meta["license"] == "cc-by-nc-4.0" and meta["language"] == ["en"]
    assert meta["task_categories"] == ["text-classification"] and meta["size_categories"] == ["n<1K"]
    assert meta["configs"][0]["data_files"] and meta["dataset_info"]["features"]
    assert "## How it was made" in readme and "2-of-3 majority" in readme
    # the agreement row of the campaign: 3 items, 2 with a majority, kappa from the votes, 1 adjudicated
    [row] = [line for line in readme.splitlines() if line.startswith("| Card study |")]
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:4] == ["3", "2", "0.667"] and cells[6:] == ["3", "9", "1"]
    assert float(cells[4]) == pytest.approx(11 / 56, abs=0.0005)  # Fleiss' kappa, worked out in the next test
    assert "A Large-Scale Dataset for Empathetic Response Generation" in readme and "2012.13624" in readme
    assert "Licence: `cc-by-nc-4.0`" in readme and "- " in readme.split("## Label set")[1]
    log = [json.loads(line) for line in (folder / "audit_log.ndjson").read_text().splitlines()]
    settled = [entry for entry in log if entry["kind"] == "adjudication.settled"]
    assert settled[0]["actor"] == "researcher" and settled[0]["reason"] == "the reply mourns"
    assert {entry["kind"] for entry in log} <= set(audit.DATASET_KINDS)
    assert not [entry for entry in log if entry["kind"].startswith(("worker.", "payment.", "assignment."))]
    info = json.loads((folder / "dataset_info.json").read_text())
    assert info["license"] == "cc-by-nc-4.0"


def test_the_cards_kappa_is_fleiss_kappa_worked_by_hand(gold):
    """Items (Angry 2, Sad 1), (Sad, Lonely, Joyful), (Joyful 3); categories Angry, Joyful, Lonely, Sad.
    P_i = (sum n_ij^2 - 3) / 6: 1/3, 0, 1 -> P-bar = 4/9. p_j = 2/9, 4/9, 1/9, 2/9 -> P_e = 25/81.
    kappa = (4/9 - 25/81) / (1 - 25/81) = (11/81) / (56/81) = 11/56."""
    from labeling.reports.dataset_figures import campaign_figures

    figures = campaign_figures(gold)
    assert figures["fleiss_kappa"] == pytest.approx(11 / 56)
    assert (figures["items"], figures["majority"], figures["adjudicated"]) == (3, 2, 1)


def test_push_dataset_uploads_the_folder_and_its_card_and_never_shows_the_token(gold, hub, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    folder = tmp_path / "hf"
    call_command("export_dataset", kind="gold", fmt="hf", out=str(folder), stdout=StringIO())
    call_command("push_dataset", "lab/dialogue-emotions", folder=str(folder))
    files = hub.repos["lab/dialogue-emotions"]
    assert set(files) == {p.name for p in folder.iterdir()}
    assert files["README.md"] == (folder / "README.md").read_bytes()
    assert front_matter(files["README.md"].decode())["license"] == "cc-by-nc-4.0"
    assert hub.commits[0]["summary"] == "Upload the dataset and its card"
    assert "/api/repos/create" in hub.requests and hub.validated[0]["license"] == "cc-by-nc-4.0"
    # a second push: the repository exists (409 is fine), one more commit
    call_command("push_dataset", "lab/dialogue-emotions", folder=str(folder), message="second")
    assert [c["summary"] for c in hub.commits] == ["Upload the dataset and its card", "second"]
    out = capsys.readouterr()
    assert "Pushed" in out.out and "lab/dialogue-emotions" in out.out
    assert TOKEN not in out.out + out.err + caplog.text


def test_push_dataset_exports_first_when_no_folder_is_given(gold, hub, capsys):
    call_command("push_dataset", "lab/fresh")
    files = hub.repos["lab/fresh"]
    assert {"README.md", "audit_log.ndjson", "dataset_info.json"} <= set(files)
    assert b"## Agreement" in files["README.md"]
    assert TOKEN not in capsys.readouterr().out


def test_a_refused_token_is_a_clear_error_without_the_token(gold, hub, settings, tmp_path, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    wrong = "hf_wrong_token_0123456789"
    settings.HUB_TOKEN = wrong
    folder = tmp_path / "hf"
    call_command("export_dataset", kind="gold", fmt="hf", out=str(folder), stdout=StringIO())
    with pytest.raises(CommandError, match="push to http://127.0.0.1") as refused:
        call_command("push_dataset", "lab/dialogue-emotions", folder=str(folder))
    assert "401" in str(refused.value)
    out = capsys.readouterr()
    assert wrong not in str(refused.value) + out.out + out.err + caplog.text and not hub.repos


def test_a_folder_without_a_card_or_a_bad_repo_id_is_refused(hub, tmp_path):
    (tmp_path / "bare").mkdir()
    with pytest.raises(CommandError, match="no README.md"):
        call_command("push_dataset", "lab/x", folder=str(tmp_path / "bare"))
    (tmp_path / "bare" / "README.md").write_text("---\n---\n")
    with pytest.raises(CommandError, match="OWNER/NAME"):
        call_command("push_dataset", "no-owner", folder=str(tmp_path / "bare"))
    assert not hub.requests


def test_gold_turn_labels_carry_the_adjudication_into_the_export(gold, tmp_path):
    crowd = TurnLabel.objects.filter(source=TurnLabel.CROWD, provenance__has_key="adjudicated")
    assert crowd.count() == 1
    assert AuditEntry.objects.filter(kind="adjudication.settled").count() == 1


# --- a Hub that cannot be reached: one clear line, never a traceback, never the token --------------


def _closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening (bound, then let go): a refused connection."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def card_folder(tmp_path):
    (tmp_path / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n")
    return tmp_path


def test_an_unreachable_hub_is_one_clear_line_without_the_token(card_folder, settings, monkeypatch, caplog):
    from huggingface_hub import HfApi, constants

    from annotation.export import hub

    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    settings.HUB_TOKEN = TOKEN
    nowhere = f"http://127.0.0.1:{_closed_port()}"
    asked = []

    def unreachable(endpoint, token):  # the adapter's one transport point, aimed where nothing answers
        asked.append(token)
        return HfApi(endpoint=nowhere, token=token)

    monkeypatch.setattr(hub, "make_api", unreachable)
    with pytest.raises(CommandError) as failed:
        call_command("push_dataset", "lab/x", folder=str(card_folder))
    message = str(failed.value)
    assert asked == [TOKEN] and message.startswith(f"push to {settings.HUB_ENDPOINT} failed: could not reach the Hub")
    assert "ConnectError" in message and "\n" not in message
    assert TOKEN not in message + caplog.text


def test_the_hub_in_offline_mode_is_one_clear_line(card_folder, settings):
    """The suite runs with HF_HUB_OFFLINE=1: the client refuses before any request."""
    settings.HUB_TOKEN = TOKEN
    with pytest.raises(CommandError, match="could not reach the Hub") as failed:
        call_command("push_dataset", "lab/x", folder=str(card_folder))
    assert "\n" not in str(failed.value) and TOKEN not in str(failed.value)


def test_push_dataset_from_the_shell_exits_with_one_line_and_no_traceback(card_folder):
    nowhere = f"http://127.0.0.1:{_closed_port()}"
    environment = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "HF_HUB_OFFLINE": "0", "ENV_FILE": ""}
    environment |= {"HUB_ENDPOINT": nowhere, "HUB_TOKEN": TOKEN, "HF_HOME": str(card_folder / "hf-home")}
    done = subprocess.run(
        [sys.executable, "manage.py", "push_dataset", "lab/x", "--folder", str(card_folder)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr and TOKEN not in done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"CommandError: push to {nowhere} failed: could not reach the Hub (ConnectError")
