"""A fake Expo push service on 127.0.0.1 for tests.

It answers ``POST /--/api/v2/push/send`` as Expo does — one ticket per message, in order — and
records every request. Tokens named in :attr:`FakeExpo.unregistered` get the
``DeviceNotRegistered`` error ticket Expo sends for an uninstalled app. Point the push plugin
at it with ``plugins.push.settings.endpoint = fake.url``::

    with FakeExpo() as fake:
        fake.unregistered.add("ExponentPushToken[gone]")
        ...
        requests = fake.wait_for_requests(1, timeout=10)

It runs in a thread of the test process (``http.server``), so it needs no event loop.
"""

from __future__ import annotations

import itertools
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SEND_PATH = "/--/api/v2/push/send"


class FakeExpo:
    """See the module docstring."""

    def __init__(self) -> None:
        self.requests: list[list[dict[str, Any]]] = []
        """The JSON body (a list of messages) of every send request, in arrival order."""
        self.unregistered: set[str] = set()
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeExpo:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeExpo:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Every message received, across requests."""
        with self._changed:
            return [message for body in self.requests for message in body]

    def wait_for_requests(self, count: int, timeout: float) -> list[list[dict[str, Any]]]:
        """The first ``count`` requests; ``TimeoutError`` if fewer arrive within ``timeout``."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.requests) >= count, timeout):
                raise TimeoutError(f"{len(self.requests)} of {count} push request(s) arrived")
            return list(self.requests[:count])

    def _ticket(self, message: dict[str, Any]) -> dict[str, Any]:
        token = message.get("to")
        if token in self.unregistered:
            return {
                "status": "error",
                "message": f'"{token}" is not a registered push notification recipient',
                "details": {"error": "DeviceNotRegistered"},
            }
        return {"status": "ok", "id": f"ticket-{next(self._ids)}"}

    def _record(self, body: list[dict[str, Any]]) -> dict[str, Any]:
        with self._changed:
            self.requests.append(body)
            tickets = [self._ticket(message) for message in body]
            self._changed.notify_all()
        return {"data": tickets}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                if self.path.split("?")[0] != SEND_PATH:
                    self._answer(404, {"errors": [{"code": "NOT_FOUND", "message": self.path}]})
                    return
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"null")
                except ValueError:
                    body = None
                if not isinstance(body, list):
                    self._answer(400, {"errors": [{"code": "VALIDATION_ERROR", "message": "?"}]})
                    return
                self._answer(200, fake._record(body))

            def _answer(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler
