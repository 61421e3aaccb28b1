"""The fake Paseo Hub: a faithful stand-in for the Hub's daemon-facing surface.

Served on 127.0.0.1 (HTTP and the daemon socket on one port, like the real Hub):

* ``POST /api/v1/daemons/enrollment-tokens`` (``Bearer <api key>``) → 201 ``{token,expiresAt}``
* ``POST /api/daemons/enroll`` — the strict body, single-use tokens, idempotent replay of the
  same ``idempotencyKey`` + ``daemonId`` + token, slugs from ``hostname``
* ``GET /api/daemons/socket`` — upgrade checked on ``Authorization`` and
  ``X-Paseo-Daemon-Id`` (401 missing, 403 unknown/revoked/wrong secret); a newer socket
  closes the older with 4001; every accepted socket gets the create of each live execution
  (same ``executionId``, new ``requestId``) and any unanswered control again
* ``DELETE /api/daemons/<id>`` (``Bearer <secret>``) → 204, idempotent; interrupts live
  executions first and waits for the answer, then closes the socket with 4403
* ``POST /agent-executions/<id>/mcp`` — the execution's MCP server with ``finish_execution``

Tests script it with :meth:`FakeHub.create`, :meth:`FakeHub.control`,
:meth:`FakeHub.validate`, inject faults with :attr:`FakeHub.enroll_faults`,
:attr:`FakeHub.socket_faults` and :meth:`FakeHub.drop_next`, and wait with
:meth:`FakeHub.wait_for` (always bounded).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paseo.testing.fake_hub.checks import check
from paseo.testing.fake_hub.http import BadRequest, Request, read_request, response
from paseo.testing.fake_hub.mcp import handle as handle_mcp
from paseo.testing.fake_hub.socket import HubSocket, handshake, reply
from paseo.testing.fake_hub.state import Daemon, Execution, Token, enroll_problem, slugify, verifier

API_KEY = "paseo_pk_fake-hub_test"
HUB_SCOPES = ["hub.execution.*"]
SOCKET_PATH = "/api/daemons/socket"
CREATE_RESPONSE = "hub.execution.agent.create.response"


class RequestLost(Exception):
    """The socket closed before the daemon answered (the Hub retries creates on reconnect)."""


@dataclass(frozen=True)
class _Pending:
    daemon_id: str
    future: asyncio.Future[dict[str, Any]]
    execution_id: str | None


class FakeHub:
    """See the module docstring. ``async with FakeHub() as hub:`` starts and stops it; state
    survives :meth:`stop` / :meth:`start` (a Hub that goes offline and comes back)."""

    def __init__(self, *, port: int = 0, api_key: str = API_KEY, token_ttl: float = 600.0) -> None:
        self.port = port
        self.api_key = api_key
        self.token_ttl = token_ttl
        self.tokens: dict[str, Token] = {}
        self.daemons: dict[str, Daemon] = {}
        self.executions: dict[str, Execution] = {}
        self.violations: list[str] = []
        """Daemon messages the real Hub would have dropped, and why."""
        self.enroll_faults: list[str | int] = []
        """Consumed one per enroll: ``"drop"`` (enroll, then close unanswered), ``"hang"``,
        ``"junk"`` (200 with a non-JSON body), ``"close"`` (close before reading), or a status
        answered instead of enrolling."""
        self.socket_faults: list[int | str] = []
        """Consumed one per upgrade: a status to refuse it with (e.g. 503), or ``"close"`` to
        drop the connection in the middle of the handshake."""
        self.enroll_answer: dict[str, Any] = {}
        """Fields laid over every enroll answer (a hostile Hub's ``slug`` or ``scopes``)."""
        self.enroll_requests = 0
        self.socket_attempts: dict[str, int] = {}
        self.revocations: list[str] = []
        self._drops: dict[str, int] = {}
        self._sockets: dict[str, HubSocket] = {}
        self._pending: dict[str, _Pending] = {}
        self._server: asyncio.Server | None = None
        self._changed = asyncio.Event()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: set[asyncio.StreamWriter] = set()

    # ------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> FakeHub:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Go offline: stop listening and drop every connection (like a crash: no 1001)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for sock in list(self._sockets.values()):
            sock.abort()
        for writer in list(self._connections):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5)
        self._fail_pending(None)

    # ---------------------------------------------------------------- tokens

    def issue_token(self) -> str:
        """A single-use enrollment token (what the dashboard or ``--api-key`` mints)."""
        value = secrets.token_urlsafe(32)
        self.tokens[value] = Token(value, time.monotonic() + self.token_ttl)
        return value

    # ----------------------------------------------------------------- waits

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for(self, predicate: Callable[[], Any], within: float = 10.0) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked on every Hub event); return it."""
        async with asyncio.timeout(within):
            while True:
                value = predicate()
                if value:
                    return value
                await self._changed.wait()

    def connected(self, daemon_id: str) -> bool:
        sock = self._sockets.get(daemon_id)
        return sock is not None and not sock.closed.is_set()

    async def wait_connected(
        self, daemon_id: str, *, after: int = 0, within: float = 10.0
    ) -> int:
        """Wait for a live socket of generation > ``after``; return its generation."""

        def ready() -> int:
            daemon = self.daemons.get(daemon_id)
            if daemon is None or not self.connected(daemon_id) or daemon.generation <= after:
                return 0
            return daemon.generation

        result: int = await self.wait_for(ready, within)
        return result

    # ------------------------------------------------------ scripted senders

    def drop_next(self, message_type: str = CREATE_RESPONSE) -> None:
        """Ignore the next daemon message of ``message_type`` (a response lost in transit)."""
        self._drops[message_type] = self._drops.get(message_type, 0) + 1

    @property
    def drops_pending(self) -> int:
        """Messages :meth:`drop_next` still has to drop."""
        return sum(self._drops.values())

    def send_raw(self, daemon_id: str, text: str) -> None:
        """Send ``text`` as-is on the daemon's socket (malformed-input tests)."""
        self._sockets[daemon_id].send(text)

    def send_binary(self, daemon_id: str, data: bytes) -> None:
        """Send a binary frame (the protocol has none; a daemon must ignore it)."""
        self._sockets[daemon_id].send_binary(data)

    def send_message(self, daemon_id: str, message: dict[str, Any]) -> None:
        self.send_raw(daemon_id, json.dumps({"type": "session", "message": message}))

    async def request(
        self,
        daemon_id: str,
        message: dict[str, Any],
        within: float = 30.0,
        *,
        execution_id: str | None = None,
    ) -> dict[str, Any]:
        """Send a request (a ``requestId`` is added) and wait for the payload answering it
        (the response, or an ``rpc_error``'s payload with ``"rpcError": True``)."""
        request_id = str(uuid.uuid4())
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(daemon_id, future, execution_id)
        try:
            self.send_message(daemon_id, {**message, "requestId": request_id})
            async with asyncio.timeout(within):
                return await future
        finally:
            self._pending.pop(request_id, None)

    async def create(
        self,
        daemon_id: str,
        *,
        prompt: str,
        cwd: str,
        provider: str = "claude",
        execution_id: str | None = None,
        tools: tuple[str, ...] = ("finish_execution",),
        auto_archive: bool = True,
        within: float = 30.0,
        **fields: Any,
    ) -> dict[str, Any]:
        """Dispatch an execution (its create is then re-sent on every socket while it is
        live) and wait for the create response's payload."""
        execution_id = execution_id or str(uuid.uuid4())
        token = secrets.token_urlsafe(24)
        body: dict[str, Any] = {
            "executionId": execution_id,
            "provider": provider,
            "cwd": cwd,
            "prompt": prompt,
            "toolPolicy": {
                "preapproved": [{"kind": "mcp", "server": "hub", "tool": t} for t in tools]
            },
            "mcpServers": {
                "hub": {
                    "type": "http",
                    "url": f"{self.url}/agent-executions/{execution_id}/mcp",
                    "headers": {"Authorization": f"Bearer {token}"},
                }
            },
        }
        body.update(fields)
        execution = self.executions.get(execution_id)
        if execution is None:
            execution = Execution(execution_id, daemon_id, body, token, auto_archive)
            self.executions[execution_id] = execution
        else:  # the same execution dispatched again (a duplicate create)
            body["mcpServers"] = execution.request["mcpServers"]
            execution.request = body
        return await self._send_create(execution, within)

    async def _send_create(self, execution: Execution, within: float) -> dict[str, Any]:
        execution.create_attempts += 1
        self._notify()
        message = {"type": "hub.execution.agent.create.request", **execution.request}
        return await self.request(
            execution.daemon_id, message, within, execution_id=execution.execution_id
        )

    async def control(
        self, daemon_id: str, execution_id: str, action: str, within: float = 30.0
    ) -> dict[str, Any]:
        execution = self.executions.get(execution_id)
        if execution is not None:
            execution.pending_control = action
        message = {
            "type": "hub.execution.control.request",
            "executionId": execution_id,
            "action": action,
        }
        return await self.request(daemon_id, message, within)

    async def validate(
        self, daemon_id: str, provider: str, within: float = 30.0, **fields: Any
    ) -> dict[str, Any]:
        message = {
            "type": "hub.execution.agent.validate.request",
            "provider": provider,
            **fields,
        }
        return await self.request(daemon_id, message, within)

    def revoke(self, daemon_id: str) -> None:
        """Dashboard revocation: the socket closes with 4403, later upgrades get 403."""
        daemon = self.daemons[daemon_id]
        daemon.revoked = True
        self.revocations.append(daemon_id)
        for execution in self.executions.values():
            if execution.daemon_id == daemon_id and execution.live:
                execution.state, execution.failure = "failed", "daemon_revoked"
        sock = self._sockets.get(daemon_id)
        if sock is not None:
            sock.close(4403, "revoked")
        self._notify()

    def spawn_control(self, daemon_id: str, execution_id: str, action: str) -> None:
        """Send a control request in the background (when the connection is live)."""
        if self.connected(daemon_id):
            self._spawn(self.control(daemon_id, execution_id, action))

    def changed(self) -> None:
        """Wake :meth:`wait_for` callers (state was changed from outside the socket)."""
        self._notify()

    def freeze(self, daemon_id: str) -> None:
        """Stop reading the daemon's socket (its pings go unanswered) without closing it."""
        self._sockets[daemon_id].freeze()

    def close_socket(
        self, daemon_id: str, code: int = 1001, reason: str = "server shutdown"
    ) -> None:
        self._sockets[daemon_id].close(code, reason)

    # ------------------------------------------------------------ connections

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections.add(writer)
        try:
            try:
                request = await read_request(reader)
            except (BadRequest, ConnectionError, asyncio.IncompleteReadError):
                writer.write(response(400, {"error": "bad request"}))
                return
            if request is None:
                return
            if request.method == "GET" and request.path.split("?")[0] == SOCKET_PATH:
                await self._socket(request, reader, writer)
                return
            answer = await self._route(request)
            if answer is not None:
                writer.write(answer)
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
        except asyncio.CancelledError:
            pass
        finally:
            self._connections.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _route(self, request: Request) -> bytes | None:
        path = request.path.split("?")[0]
        if request.method == "GET" and path == "/health":
            return response(200, {"ok": True})
        if request.method == "POST" and path == "/api/v1/daemons/enrollment-tokens":
            if request.bearer() != self.api_key:
                problem = {"type": "about:blank", "title": "Unauthorized", "status": 401}
                return response(401, problem, content_type="application/problem+json")
            token = self.issue_token()
            return response(201, {"token": token, "expiresAt": "in 10 minutes"})
        if request.method == "POST" and path == "/api/daemons/enroll":
            return await self._enroll(request)
        if request.method == "DELETE" and path.startswith("/api/daemons/"):
            return await self._delete(request, path.rsplit("/", 1)[1])
        if path.startswith("/agent-executions/") and path.endswith("/mcp"):
            execution_id = path.split("/")[2]
            return await handle_mcp(self, request, execution_id)
        return response(404, {"error": "not found"})

    async def _enroll(self, request: Request) -> bytes | None:
        self.enroll_requests += 1
        fault = self.enroll_faults.pop(0) if self.enroll_faults else None
        if fault == "close":
            return None
        if fault == "hang":
            await asyncio.Event().wait()
        if isinstance(fault, int):
            return response(fault, {"error": "fault injected"})
        if fault == "junk":
            return response(200, b"<html>definitely not JSON", content_type="text/html")
        token = request.bearer()
        if token is None:
            return response(401, {"error": "unauthorized"})
        try:
            body = request.json()
        except ValueError:
            body = None
        problem = enroll_problem(body)
        if problem is not None:
            self.violations.append(f"enroll: {problem}")
            return response(400, {"error": "invalid enrollment"})
        answer = self._enrolled(body, token)
        self._notify()
        if answer is None:
            return response(401, {"error": "invalid enrollment token"})
        if fault == "drop":
            return None  # enrolled, but the answer is lost
        return response(200, answer)

    def _enrolled(self, body: dict[str, Any], token: str) -> dict[str, Any] | None:
        daemon_id = body["daemonId"]
        existing = self.daemons.get(daemon_id)
        if existing is not None:
            if existing.idempotency_key == body["idempotencyKey"] and existing.token == token:
                return self._enroll_answer(existing)
            return None
        record = self.tokens.get(token)
        if record is None or record.used_by is not None or record.expires_at < time.monotonic():
            return None
        record.used_by = daemon_id
        slug = slugify(body.get("hostname") or f"daemon-{daemon_id[:8]}")
        if any(d.slug == slug for d in self.daemons.values()):
            slug = f"{slug}-{daemon_id[:8]}"
        daemon = Daemon(
            daemon_id=daemon_id,
            idempotency_key=body["idempotencyKey"],
            token=token,
            verifier=body["credentialVerifier"],
            slug=slug,
            server_id=body["serverId"],
            public_key=body["daemonPublicKey"],
        )
        self.daemons[daemon_id] = daemon
        return self._enroll_answer(daemon)

    def _enroll_answer(self, daemon: Daemon) -> dict[str, Any]:
        return {
            "daemonId": daemon.daemon_id,
            "slug": daemon.slug,
            "scopes": list(HUB_SCOPES),
            "webSocketUrl": f"ws://127.0.0.1:{self.port}{SOCKET_PATH}",
            **self.enroll_answer,
        }

    def authenticate(self, daemon_id: str | None, secret: str | None) -> Daemon | None:
        daemon = self.daemons.get(daemon_id or "")
        if daemon is None or secret is None or verifier(secret) != daemon.verifier:
            return None
        return daemon

    async def _delete(self, request: Request, daemon_id: str) -> bytes:
        daemon = self.authenticate(daemon_id, request.bearer())
        if daemon is None:
            return response(401, {"error": "unauthorized"})
        if not daemon.revoked:
            live = [
                e for e in self.executions.values() if e.daemon_id == daemon_id and e.live
            ]
            if live and self.connected(daemon_id):
                # The real Hub interrupts live executions and waits for the answers first.
                await asyncio.gather(
                    *(self.control(daemon_id, e.execution_id, "interrupt", 10) for e in live),
                    return_exceptions=True,
                )
            self.revoke(daemon_id)
        return response(204)

    # ----------------------------------------------------------------- socket

    async def _socket(
        self, request: Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            protocol, upgrade = handshake(request.head)
        except ValueError:
            writer.transport.abort()
            return
        daemon_id = request.header("x-paseo-daemon-id")
        secret = request.bearer()
        self.socket_attempts[daemon_id or ""] = self.socket_attempts.get(daemon_id or "", 0) + 1
        self._notify()
        status: int | None = None
        daemon = None
        fault = self.socket_faults.pop(0) if self.socket_faults else None
        if fault == "close":
            writer.transport.abort()
            return
        if isinstance(fault, int):
            status = fault
        elif daemon_id is None or secret is None:
            status = 401
        else:
            daemon = self.authenticate(daemon_id, secret)
            if daemon is None or daemon.revoked:
                status = 403
        if not reply(protocol, upgrade, writer, status) or daemon is None:
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            return
        sock = HubSocket(protocol, reader, writer)
        previous = self._sockets.get(daemon.daemon_id)
        daemon.generation += 1
        self._sockets[daemon.daemon_id] = sock
        if previous is not None:
            previous.close(4001, "replaced")
        self._notify()
        self._replay(daemon)
        await sock.run(
            lambda text: self._on_text(daemon, sock, text),
            lambda: self.violations.append("the daemon sent a binary frame"),
        )
        if self._sockets.get(daemon.daemon_id) is sock:
            del self._sockets[daemon.daemon_id]
            self._fail_pending(daemon.daemon_id)
        self._notify()

    def _replay(self, daemon: Daemon) -> None:
        for execution in list(self.executions.values()):
            if execution.daemon_id != daemon.daemon_id or not execution.live:
                continue
            self._spawn(self._send_create(execution, 30))
            if execution.pending_control is not None:
                action = execution.pending_control
                self._spawn(self.control(daemon.daemon_id, execution.execution_id, action))

    def _spawn(self, coroutine: Any) -> None:
        async def quietly() -> None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await coroutine

        task = asyncio.get_running_loop().create_task(quietly())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _fail_pending(self, daemon_id: str | None) -> None:
        for request_id, pending in list(self._pending.items()):
            if daemon_id in (None, pending.daemon_id) and not pending.future.done():
                pending.future.set_exception(RequestLost(request_id))

    def _on_text(self, daemon: Daemon, sock: HubSocket, text: str) -> None:
        try:
            frame = json.loads(text)
        except ValueError:
            self.violations.append("the daemon sent non-JSON text")
            sock.close(4400, "invalid daemon message")
            return
        message = frame.get("message") if isinstance(frame, dict) else None
        if not isinstance(frame, dict) or frame.get("type") != "session":
            self.violations.append(f"frame outside the session envelope: {text[:80]}")
            return
        problem = check(message)
        if problem is not None:
            kind = message.get("type") if isinstance(message, dict) else None
            self.violations.append(f"{kind}: {problem}")
            return
        assert isinstance(message, dict)
        kind = message["type"]
        if self._drops.get(kind):
            self._drops[kind] -= 1
            self._notify()
            return
        daemon.messages.append(message)
        self._handle(message["payload"], kind)
        self._notify()

    def _handle(self, payload: dict[str, Any], kind: str) -> None:
        execution = self.executions.get(payload.get("executionId") or "")
        if kind == CREATE_RESPONSE and execution is not None:
            execution.responses.append(payload)
            if payload["success"]:
                execution.agent_id, execution.agent = payload["agentId"], payload["agent"]
                if payload["agent"]["status"] in ("closed", "error"):
                    execution.state, execution.failure = "failed", "agent_interrupted"
                elif execution.state == "pending":
                    execution.state = "running"
            else:
                execution.state, execution.failure = "failed", payload["error"]["code"]
            # One create response settles every pending create of the execution.
            for pending in list(self._pending.values()):
                if pending.execution_id == execution.execution_id and not pending.future.done():
                    pending.future.set_result(payload)
        elif kind == "hub.execution.agent.stream" and execution is not None:
            execution.events.append(payload["event"])
        elif kind == "hub.execution.agent.update" and execution is not None:
            execution.updates.append(payload["agent"])
            execution.agent = payload["agent"]
        elif (
            kind == "hub.execution.control.response"
            and execution is not None
            and payload["success"]
            and execution.pending_control == payload["action"]
        ):
            execution.pending_control = None
        request_id = payload.get("requestId")
        answered = self._pending.get(request_id) if isinstance(request_id, str) else None
        if answered is not None and not answered.future.done():
            result = dict(payload, rpcError=True) if kind == "rpc_error" else payload
            answered.future.set_result(result)
