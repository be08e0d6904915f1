"""A real HTTP receiver on 127.0.0.1 in a thread, answering each POST with the next scripted
status (the last one repeats) and keeping what it received."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    statuses: list[int]
    received: list[Received] = field(default_factory=list)
    url: str = ""

    def next_status(self) -> int:
        index = min(len(self.received) - 1, len(self.statuses) - 1)
        return self.statuses[index]


def start_receiver(statuses: list[int]) -> tuple[Receiver, ThreadingHTTPServer]:
    receiver = Receiver(statuses)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            receiver.received.append(Received(dict(self.headers), body))
            self.send_response(receiver.next_status())
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:  # quiet test output
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook?token=abc"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return receiver, server
