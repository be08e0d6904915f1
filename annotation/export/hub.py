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
before it is raised (tests/annotation/test_push_dataset.py captures logs and output and checks).
"""

from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled


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
    api = HfApi(endpoint=endpoint.rstrip("/"), token=token or None)
    try:
        repo = api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=message or "Upload the dataset and its card",
        )
    except (HfHubHTTPError, OfflineModeIsEnabled, OSError, ValueError) as error:
        raise HubError(_without(str(error), token)) from None
    files = sum(1 for path in folder.rglob("*") if path.is_file())
    return Pushed(repo_url=str(repo), commit_url=commit.commit_url, files=files)


def _without(text: str, token: str | None) -> str:
    return text.replace(token, "[token]") if token else text
