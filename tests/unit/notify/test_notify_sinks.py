"""The notify plugin's sinks, queues and counters, against a loopback server and real programs."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psutil
import pytest
from paseo_notify.delivery import SinkWorker
from paseo_notify.secret import SecretFileError, load_or_create
from paseo_notify.settings import CommandSink, NotifySettings, NtfySink, WebhookSink
from paseo_notify.transports import DeliveryError, post_ntfy, post_webhook, run_command
from pydantic import ValidationError

PAYLOAD = {"event": "finished", "agentId": "a1", "title": "t", "summary": "done"}


class Server:
    """Loopback HTTP server answering the statuses in ``answers`` in turn (then 204)."""

    def __init__(self, answers: list[int] | None = None) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        answers = list(answers or [])
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                requests.append((dict(self.headers.items()), body))
                self.send_response(answers.pop(0) if answers else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/"
        self.thread = threading.Thread(target=self.http.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_webhook_posts_signed_json(server: Server) -> None:
    sink = WebhookSink(type="webhook", url=server.url)
    body = json.dumps(PAYLOAD).encode()
    _run(post_webhook(sink, body, b"k3y"))
    headers, got = server.requests[0]
    assert json.loads(got) == PAYLOAD
    assert headers["Content-Type"] == "application/json"
    assert (
        headers["X-Paseo-Signature"]
        == "sha256=" + hmac.new(b"k3y", got, hashlib.sha256).hexdigest()
    )
    _run(post_webhook(sink, body, None))
    assert "X-Paseo-Signature" not in server.requests[1][0]


def test_ntfy_posts_text_with_a_title(server: Server) -> None:
    sink = NtfySink(type="ntfy", url=server.url)
    _run(post_ntfy(sink, "Café agent", "Needs your permission: Bash", urgent=True))
    _run(post_ntfy(sink, "计划", "Finished", urgent=False))
    headers, body = server.requests[0]
    assert body == b"Needs your permission: Bash"
    assert headers["Title"] == "Café agent"
    assert headers["Priority"] == "high"
    assert server.requests[1][0]["Title"].startswith("=?UTF-8?B?")


def test_an_http_error_and_an_unreachable_url_are_delivery_errors() -> None:
    failing = Server([500])
    try:
        with pytest.raises(DeliveryError, match="HTTP 500"):
            _run(post_webhook(WebhookSink(type="webhook", url=failing.url), b"{}", None))
    finally:
        failing.close()
    with pytest.raises(DeliveryError, match="could not connect"):
        _run(post_webhook(WebhookSink(type="webhook", url=failing.url), b"{}", None))


def test_the_worker_retries_with_backoff_and_counts() -> None:
    flaky = Server([500, 503])
    try:
        sink = WebhookSink(type="webhook", url=flaky.url, retries=3, backoff=0.01)

        async def body() -> dict[str, Any]:
            delivered = asyncio.Event()

            async def deliver(p: dict[str, Any]) -> None:
                await post_webhook(sink, json.dumps(p).encode(), None)
                delivered.set()

            worker = _worker(deliver, 3)
            worker.start()
            worker.offer(PAYLOAD)
            await delivered.wait()
            await asyncio.sleep(0)  # the worker counts it before it waits for the next
            worker.stop()
            return worker.status()

        status = _run(body())
    finally:
        flaky.close()
    assert len(flaky.requests) == 3
    assert status["sent"] == 1
    assert status["retried"] == 2
    assert status["failed"] == 0
    assert status["lastError"] == "HTTP 503"


def _worker(deliver: Any, retries: int, queue_size: int = 10) -> SinkWorker:
    return SinkWorker(
        name="s",
        type="webhook",
        events=frozenset({"finished"}),
        deliver=deliver,
        retries=retries,
        backoff=0.01,
        queue_size=queue_size,
    )


def test_a_failing_sink_never_blocks_and_drops_beyond_its_queue() -> None:
    async def body() -> dict[str, Any]:
        stuck = asyncio.Event()
        delivering = asyncio.Event()
        last_attempt = asyncio.Event()
        attempts = 0

        async def deliver(payload: dict[str, Any]) -> None:
            nonlocal attempts
            attempts += 1
            if attempts == 1:
                delivering.set()
                await stuck.wait()  # the first delivery hangs, as a dead server would
            if attempts == 6:  # three notifications, two attempts each
                last_attempt.set()
            raise DeliveryError("down")

        worker = _worker(deliver, retries=1, queue_size=2)
        worker.start()
        worker.offer(PAYLOAD)
        await delivering.wait()
        for _ in range(5):  # returns at once every time: nothing here awaits the sink
            worker.offer(PAYLOAD)
        stuck.set()
        await last_attempt.wait()
        await asyncio.sleep(0)
        worker.stop()
        return worker.status()

    status = _run(body())
    assert status["dropped"] == 3  # one in delivery, two queued, three refused
    assert status["failed"] == 3
    assert status["sent"] == 0
    assert status["lastError"] == "down"


def test_the_command_sink_gets_the_json_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    script = f"import sys; open({str(out)!r}, 'wb').write(sys.stdin.buffer.read())"
    sink = CommandSink(type="command", argv=[sys.executable, "-c", script])
    _run(run_command(sink, json.dumps(PAYLOAD).encode()))
    assert json.loads(out.read_text()) == PAYLOAD


def test_a_command_that_never_reads_its_stdin_delivered(tmp_path: Path) -> None:
    """``true`` (or a script that only looks at its arguments) exits before reading: that is
    a delivery, not a closed-pipe error. A large body makes the write outlive the program."""
    import uvloop  # the daemon's loop, where the closed pipe surfaced as a RuntimeError

    sink = CommandSink(type="command", argv=["true"])

    async def often(body: bytes) -> None:
        for _ in range(30):  # a race: before the fix most of 30 failed under uvloop
            await run_command(sink, body)

    for body in (b"{}", b"x" * 4_000_000):
        _run(often(body))
        uvloop.run(asyncio.wait_for(often(body), 60))
    stderr_heavy = CommandSink(
        type="command",
        argv=[sys.executable, "-c", "import sys; sys.stderr.write('e' * 500000)"],
    )
    _run(run_command(stderr_heavy, b"{}"))


def test_a_failing_or_hanging_command_is_an_error_and_is_reaped(tmp_path: Path) -> None:
    failing = CommandSink(
        type="command", argv=[sys.executable, "-c", "import sys; sys.exit('no display')"]
    )
    with pytest.raises(DeliveryError, match="exited with status 1: no display"):
        _run(run_command(failing, b"{}"))
    with pytest.raises(DeliveryError, match="could not run"):
        _run(run_command(CommandSink(type="command", argv=[str(tmp_path / "nope")]), b"{}"))
    hanging = CommandSink(
        type="command", argv=[sys.executable, "-c", "import time; time.sleep(60)"], timeout=0.5
    )
    with pytest.raises(DeliveryError, match=r"ran longer than 0\.5s"):
        _run(run_command(hanging, b"{}"))
    mine = psutil.Process().children(recursive=True)
    assert not [p for p in mine if p.status() != psutil.STATUS_ZOMBIE]
    assert not [p for p in mine if p.status() == psutil.STATUS_ZOMBIE]


def test_the_secret_file_is_created_0600_and_a_readable_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    key = load_or_create(path)
    assert len(key) == 64
    assert path.stat().st_mode & 0o777 == 0o600
    assert load_or_create(path) == key
    path.chmod(0o644)
    with pytest.raises(SecretFileError, match=f"chmod 600 {path}"):
        load_or_create(path)
    empty = tmp_path / "empty"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(SecretFileError, match="is empty"):
        load_or_create(empty)


def test_settings_accept_every_event_name_and_refuse_others() -> None:
    settings = NotifySettings.model_validate(
        {
            "sinks": [
                {
                    "type": "ntfy",
                    "url": "https://ntfy.sh/x",
                    "events": ["budget", "schedule-failed"],
                },
                {"type": "command", "argv": ["notify-send"]},
            ]
        }
    )
    assert settings.sinks[1].events == ["finished", "permission", "error"]
    assert settings.sinks[1].retries == 0
    for bad in (
        {"type": "webhook", "url": "http://x", "events": ["started"]},
        {"type": "webhook", "url": "ftp://x"},
        {"type": "command", "argv": []},
        {"type": "email", "to": "me"},
    ):
        with pytest.raises(ValidationError):
            NotifySettings.model_validate({"sinks": [bad]})
