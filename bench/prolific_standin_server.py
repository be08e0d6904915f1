"""The project's stateful Prolific stand-in (labeling.platforms.standin.prolific) served over HTTP
on 127.0.0.1, in a process of its own, answering every API call after an added latency.

    .venv/bin/python bench/prolific_standin_server.py --port 8766 --latency-ms 300 --cert-dir DIR

The Prolific adapter has no base-URL setting: it always calls https://api.prolific.com/api/v1
(labeling.platforms.prolific.API) through a `requests` session (make_session). `requests` takes
its proxy and its trusted certificates from the environment (HTTPS_PROXY, REQUESTS_CA_BUNDLE:
https://requests.readthedocs.io/en/latest/user/advanced/#proxies), so a process started with
    HTTPS_PROXY=http://127.0.0.1:<port>  REQUESTS_CA_BUNDLE=<cert-dir>/prolific.pem
    PROLIFIC_API_TOKEN=<anything>
reaches this server instead, with no change to the product: this server answers the proxy's
CONNECT for api.prolific.com:443, holds TLS with a certificate made here for that name (openssl,
kept in --cert-dir; nothing trusts it but a process given REQUESTS_CA_BUNDLE), and hands each
request under /api/v1 to the stand-in's `handle`, the same surface its in-process session answers,
after sleeping --latency-ms (Prolific warns of latency under high volume and names no figure:
https://docs.prolific.com/documentation/core-concepts/managing-high-loads). Each connection has
a thread of its own, so concurrent calls wait their latency side by side, as on the real API.

Plain HTTP on the same port, for the bench only (never through the proxy):
    POST /bench/study        {"study": id, "participants": [[participant, session], ...]}
        a published (ACTIVE) study with one place per participant, each of whom takes a place and
        opens the study (the stand-in's own reserve + start: RESERVED -> ACTIVE);
    POST /bench/latency      {"ms": 3000}   the added latency from now on;
    GET  /bench/stats        {"api_requests": n, "by_route": {...}, "latency_ms": ...}.
Prints "ready port=<port>" on stdout once it listens. Only 127.0.0.1 is bound.
"""

import argparse
import importlib
import json
import ssl
import subprocess
import sys
import threading
import time
import types
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _import_standin():
    """labeling.platforms.standin.prolific without the packages' __init__ (they import Django; the
    stand-in itself is pure): in a process of its own its parent packages are registered as bare
    folders first. Loaded inside the project's process (a test), the real packages are used: a bare
    `labeling.platforms.standin` left in sys.modules would hide the package's own names from every
    later import in that process."""
    if "labeling" in sys.modules:
        return importlib.import_module("labeling.platforms.standin.prolific")
    for name in ("labeling", "labeling.platforms", "labeling.platforms.standin"):
        package = types.ModuleType(name)
        package.__path__ = [str(REPO.joinpath(*name.split(".")))]
        sys.modules.setdefault(name, package)
    return importlib.import_module("labeling.platforms.standin.prolific")


standin = _import_standin()
ACTIVE, ProlificStandIn, Study = standin.ACTIVE, standin.ProlificStandIn, standin.Study

HOST = "127.0.0.1"
PROLIFIC_HOST = "api.prolific.com"
API_PREFIX = "/api/v1"


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for api.prolific.com (and its key), made once in `folder`."""
    certificate, key = folder / "prolific.pem", folder / "prolific.key"
    if not certificate.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-keyout", str(key), "-out", str(certificate), "-subj", f"/CN={PROLIFIC_HOST}",
                "-addext", f"subjectAltName=DNS:{PROLIFIC_HOST}",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,digitalSignature,keyCertSign",
            ],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return certificate, key


class State:
    """The stand-in, its lock (its dicts are not made for threads) and the settings of the run."""

    def __init__(self, latency_ms: float) -> None:
        self.platform = ProlificStandIn()
        self.lock = threading.Lock()
        self.latency_ms = latency_ms
        self.by_route: Counter = Counter()

    def answer(self, method: str, path: str, body: dict | None) -> tuple[int, dict]:
        time.sleep(self.latency_ms / 1000)  # outside the lock: concurrent calls wait side by side
        with self.lock:
            self.by_route[f"{method} {path.split('/')[1] if '/' in path else path}"] += 1
            return self.platform.handle(method, path, body)

    def publish(self, study_id: str, participants: list[list[str]]) -> dict:
        with self.lock:
            body = {"name": "bench study", "total_available_places": len(participants)}
            self.platform.studies[study_id] = Study(study_id, body, status=ACTIVE)
            for participant, session in participants:
                # the stand-in names sessions itself; the bench's ids are kept so its links match
                made = self.platform.reserve(study_id, participant)
                submission = self.platform.submissions.pop(made)
                submission.id = session
                self.platform.submissions[session] = submission
                self.platform.start(session)
            active = sum(1 for s in self.platform.submissions.values() if s.status == "ACTIVE")
        return {"study": study_id, "active": active}


def handler_for(state: State, context: ssl.SSLContext):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the adapter's session uses it

        def do_CONNECT(self) -> None:
            if self.path != f"{PROLIFIC_HOST}:443":
                self.send_error(403, "this proxy reaches only the Prolific stand-in")
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            self.wfile.flush()
            # from here the tunnel is TLS to "api.prolific.com": the requests inside it are read
            # by this same handler's loop (handle_one_request) on the wrapped socket
            self.connection = context.wrap_socket(self.connection, server_side=True)
            self.rfile = self.connection.makefile("rb", self.rbufsize)
            self.wfile = self.connection.makefile("wb", 0)
            self.close_connection = False

        def _body(self) -> dict | None:
            length = int(self.headers.get("Content-Length") or 0)
            return json.loads(self.rfile.read(length)) if length else None

        def _reply(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode() if payload else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _api(self, method: str) -> None:
            path = self.path
            if path.startswith(f"https://{PROLIFIC_HOST}"):  # an absolute form, should a client send one
                path = path.removeprefix(f"https://{PROLIFIC_HOST}")
            if not path.startswith(API_PREFIX + "/"):
                self._reply(404, {"error": f"no such endpoint {method} {path}"})
                return
            self._reply(*state.answer(method, path.removeprefix(API_PREFIX), self._body()))

        def do_GET(self) -> None:
            if self.path == "/bench/stats":
                with state.lock:
                    stats = {"api_requests": sum(state.by_route.values()), "by_route": dict(state.by_route)}
                self._reply(200, stats | {"latency_ms": state.latency_ms})
            else:
                self._api("GET")

        def do_POST(self) -> None:
            if self.path == "/bench/study":
                body = self._body() or {}
                self._reply(200, state.publish(body["study"], body["participants"]))
            elif self.path == "/bench/latency":
                state.latency_ms = float((self._body() or {})["ms"])
                self._reply(200, {"latency_ms": state.latency_ms})
            else:
                self._api("POST")

        def do_PATCH(self) -> None:
            self._api("PATCH")

        def do_DELETE(self) -> None:
            self._api("DELETE")

        def log_message(self, *args) -> None:
            pass

    return Handler


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # a burst of connections waits in the backlog, not refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--latency-ms", type=float, default=300, help="added to every API answer")
    parser.add_argument("--cert-dir", required=True, help="where the certificate for api.prolific.com is kept")
    args = parser.parse_args()
    certificate, key = make_certificate(Path(args.cert_dir))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    state = State(args.latency_ms)
    server = Server((HOST, args.port), handler_for(state, context))
    print(f"ready port={args.port} certificate={certificate}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
