"""The Hub relationship service: the state machine behind ``paseo hub connect | status |
disconnect``, started with the daemon.

States: ``not_connected`` (no relationship) → ``connecting`` (enrolling, or dialling a loaded
relationship) → ``connected`` ⇄ ``reconnecting``; ``disconnecting`` (revocation requested and
retried, no socket); ``revoked`` (the Hub ended it; the credential is gone). Every transition
that matters after a crash is written to ``hub-relationship.json`` before it takes effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Literal

from paseo_hookspecs.atomic import sweep_temp_files
from paseo_hookspecs.errors import Conflict, InvalidParams
from pydantic import BaseModel, ConfigDict, ValidationError

from paseo_hub import files, hub_http
from paseo_hub.agents import HubAgents
from paseo_hub.executions import Executions
from paseo_hub.intents import FILE_NAME as INTENTS_FILE
from paseo_hub.intents import IntentStore
from paseo_hub.link import HubLink, backoff_delay
from paseo_hub.relationship import (
    FILE_NAME,
    InvalidHubUrl,
    Relationship,
    Revocation,
    TransportInfo,
    new_pending,
    normalize_origin,
    now_iso,
    read_public_key,
)
from paseo_hub.settings import HubSettings

log = logging.getLogger("paseo.hub")

DURABLE_FILES = (FILE_NAME, INTENTS_FILE)
"""The files this plugin keeps in ``$PASEO_HOME`` (their leftover temporary files are swept)."""

State = Literal[
    "not_connected", "connecting", "connected", "reconnecting", "disconnecting", "revoked"
]
FORCE_WARNING = (
    "local authority was removed; the Hub was not told, so remote revocation may still be "
    "pending: revoke the daemon in the Hub dashboard"
)


class HubStatus(BaseModel):
    """``hub.relationship.get_status`` (and the state after connect/disconnect)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    state: State
    daemonId: str | None = None
    hubOrigin: str | None = None
    slug: str | None = None
    scopes: list[str] = []
    lastError: str | None = None
    since: str
    warning: str | None = None


class HubService:
    """One relationship per daemon (see the module docstring)."""

    def __init__(
        self,
        home: Path,
        agents: HubAgents,
        *,
        server_id: str,
        version: str,
        settings: HubSettings | None = None,
    ) -> None:
        self._path = home / FILE_NAME
        self._home = home
        self._agents = agents
        self._server_id = server_id
        self._user_agent = f"paseo-daemon/{version}"
        self._settings = settings or HubSettings()
        self._relationship: Relationship | None = None
        self._state: State = "not_connected"
        self._since = now_iso()
        self._error: str | None = None
        self._lock = asyncio.Lock()
        self._changed = asyncio.Event()
        self._link: HubLink | None = None
        self._executions: Executions | None = None
        self._task: asyncio.Task[None] | None = None
        self._unobserve: list[Callable[[], None]] = []
        self._swept = False

    # ------------------------------------------------------------- lifecycle

    def sweep(self) -> None:
        """Delete what a killed write of ours left (a secret among it). Before anything of ours
        is written, and never while a write may run: a sweep racing a write deletes its
        temporary file under it. Blocking, one directory listing; once per service."""
        if not self._swept:
            self._swept = True
            sweep_temp_files(self._home, DURABLE_FILES)

    async def start(self) -> None:
        """Load the relationship and resume what it was doing: enrolling, dialling or
        retrying a revocation (never a socket while disconnecting)."""
        if not self._swept:
            await asyncio.to_thread(self.sweep)
        try:
            document = await asyncio.to_thread(files.read_json, self._path)
            relationship = Relationship.model_validate(document) if document else None
        except (OSError, ValueError, ValidationError) as exc:
            log.error(  # noqa: TRY400 (the cause is in the message; no traceback needed)
                "%s is unreadable (%s); the Hub relationship is off", self._path, exc
            )
            self._set("not_connected", f"{FILE_NAME} is unreadable; disconnect to reset")
            return
        self._relationship = relationship
        if relationship is None:
            return
        if relationship.state == "pending":
            self._set("connecting")
            self._spawn(self._enroll_loop(relationship))
        elif relationship.state == "active":
            self._set("connecting")
            await self._open_link(relationship)
        elif relationship.state == "disconnecting":
            self._set("disconnecting")
            self._spawn(self._revoke_loop(relationship))
        else:
            revocation = relationship.revocation
            self._set("revoked", revocation.reason if revocation else None)
            if revocation is not None:
                self._since = revocation.revokedAt

    def detach(self) -> None:
        """Stop observing agents at once (daemon shutdown): the turns the shutdown interrupts
        must keep their resume intents armed, so their cancellation must not be seen."""
        for stop in self._unobserve:
            stop()
        self._unobserve.clear()

    async def stop(self) -> None:
        self.detach()
        await self._cancel_task()
        await self._close_link()

    def status(self) -> HubStatus:
        relationship = self._relationship
        info = relationship.relationship if relationship else None
        return HubStatus(
            state=self._state,
            daemonId=info.daemonId if info else None,
            hubOrigin=info.hubOrigin if info else None,
            slug=info.slug if info else None,
            scopes=list(info.scopes) if info else [],
            lastError=self._error,
            since=self._since,
        )

    @property
    def link(self) -> HubLink | None:
        return self._link

    async def flush(self) -> None:
        """Wait for the resume-intent writes and auto-archives that agent events triggered."""
        if self._executions is not None:
            await self._executions.drain()

    # --------------------------------------------------------------- connect

    async def connect(self, url: str, token: str) -> HubStatus:
        """Enroll with the Hub at ``url`` and open the socket; waits up to ``connectWait``
        for ``connected`` (or a refusal), then reports whatever the state is."""
        token = token.strip()
        if not token:
            raise InvalidParams("an enrollment token is required (--token)")
        try:
            origin = normalize_origin(url)
        except InvalidHubUrl as exc:
            raise InvalidParams(str(exc)) from None
        async with self._lock:
            current = self._relationship
            if current is not None and current.state != "revoked":
                raise Conflict(
                    f"this daemon already has a Hub relationship with "
                    f"{current.relationship.hubOrigin} ({self._state}); "
                    "run `paseo hub disconnect` first"
                )
            public_key = await asyncio.to_thread(read_public_key, self._home)
            relationship = new_pending(origin, token, self._server_id, public_key)
            await self._write(relationship)  # durable before the Hub hears of it
            self._relationship = relationship
            self._set("connecting")
            self._spawn(self._enroll_loop(relationship))
        settled = self.wait_for_state("connected", "not_connected", "revoked")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(settled, self._settings.connectWait)
        return self.status()

    async def _enroll_loop(self, relationship: Relationship) -> None:
        hostname = socket.gethostname() or None
        failures = 0
        while True:
            outcome = await hub_http.enroll(relationship, hostname, self._settings.httpTimeout)
            if isinstance(outcome, hub_http.Enrolled):
                await self._activate(relationship, outcome)
                return
            if isinstance(outcome, hub_http.Rejected):
                async with self._lock:
                    await asyncio.to_thread(files.remove, self._path)
                    self._relationship = None
                    self._set("not_connected", outcome.reason)
                return
            self._error = outcome.reason
            log.warning("Hub enrollment will be retried: %s", outcome.reason)
            settings = self._settings
            delay = backoff_delay(failures, settings.backoffInitial, settings.backoffMax)
            failures += 1
            await asyncio.sleep(delay)

    async def _activate(self, pending: Relationship, enrolled: hub_http.Enrolled) -> None:
        info = pending.relationship.model_copy(
            update={"scopes": enrolled.scopes, "slug": enrolled.slug}
        )
        active = pending.model_copy(
            update={
                "state": "active",
                "relationship": info,
                "enrollment": None,
                "transport": TransportInfo(webSocketUrl=enrolled.web_socket_url),
            }
        )
        async with self._lock:
            await self._write(active)
            self._relationship = active
            self._error = None
            await self._open_link(active)

    # ---------------------------------------------------------------- socket

    async def _open_link(self, relationship: Relationship) -> None:
        executions = Executions(
            self._agents,
            relationship.relationship.daemonId,
            IntentStore(self._home),
            self._send,
        )
        await executions.load()
        self._executions = executions
        self._unobserve.append(self._agents.observe(executions))
        link = HubLink(relationship, self._settings, executions, self, self._user_agent)
        self._link = link
        link.start()

    def _send(self, message: dict[str, Any]) -> None:
        if self._link is not None:
            self._link.send(message)

    async def _close_link(self) -> None:
        link, self._link = self._link, None
        self.detach()
        if link is not None:
            await link.stop()
        executions, self._executions = self._executions, None
        if executions is not None:
            await executions.drain()

    def link_state(self, state: str, error: str | None) -> None:
        if self._state in ("disconnecting", "revoked", "not_connected"):
            return
        if state == "connected":
            self._set("connected")
        else:
            self._set("reconnecting", error)

    async def link_revoked(self, reason: str) -> None:
        """Permanent: delete the secret, stop dialling, keep id, origin, scopes and reason."""
        async with self._lock:
            relationship = self._relationship
            if relationship is None or self._state in ("disconnecting", "not_connected"):
                return
            revoked = Relationship(
                state="revoked",
                relationship=relationship.relationship,
                revocation=Revocation(reason=reason, revokedAt=now_iso()),
            )
            await self._write(revoked)
            self._relationship = revoked
            self._set("revoked", reason)
            log.warning("the Hub revoked this daemon: %s", reason)
        # The link calls this from its own task, which then ends; do not await it here.
        link, self._link = self._link, None
        if link is not None:
            link.stop_reconnecting()
        self.detach()

    # ------------------------------------------------------------ disconnect

    async def disconnect(self, *, force: bool = False) -> HubStatus:
        """Stop reconnecting, then revoke on the Hub while still serving the socket; if the
        Hub cannot be reached, persist ``disconnecting`` and retry. ``force`` drops local
        authority at once."""
        async with self._lock:
            relationship = self._relationship
            if relationship is None or relationship.state == "revoked":
                await asyncio.to_thread(files.remove, self._path)
                self._relationship = None
                self._set("not_connected")
                return self.status()
            await self._cancel_task()
            if force:
                await self._close_link()
                await asyncio.to_thread(files.remove, self._path)
                self._relationship = None
                self._set("not_connected")
                return self.status().model_copy(update={"warning": FORCE_WARNING})
            if self._link is not None:
                self._link.stop_reconnecting()
            disconnecting = relationship.model_copy(
                update={"state": "disconnecting", "enrollment": None}
            )
            await self._write(disconnecting)
            self._relationship = disconnecting
            self._set("disconnecting")
        outcome = await hub_http.revoke(disconnecting, self._settings.httpTimeout)
        await self._close_link()
        if outcome is None:
            await self._finish_disconnect(disconnecting)
            return self.status()
        async with self._lock:
            if self._relationship is not disconnecting:  # a --force came in meanwhile
                return self.status()
            self._error = outcome.reason
            self._spawn(self._revoke_loop(disconnecting, failures=1))
        return self.status().model_copy(
            update={"warning": f"{outcome.reason}; the revocation will be retried"}
        )

    async def _revoke_loop(self, relationship: Relationship, *, failures: int = 0) -> None:
        """Retry the revocation until the Hub answers (``failures`` already happened)."""
        settings = self._settings
        while True:
            if failures:
                delay = backoff_delay(failures - 1, settings.backoffInitial, settings.backoffMax)
                await asyncio.sleep(delay)
            outcome = await hub_http.revoke(relationship, self._settings.httpTimeout)
            if outcome is None:
                await self._finish_disconnect(relationship)
                return
            self._error = outcome.reason
            failures += 1

    async def _finish_disconnect(self, relationship: Relationship) -> None:
        async with self._lock:
            if self._relationship is not relationship:  # already forgotten (--force)
                return
            await asyncio.to_thread(files.remove, self._path)
            self._relationship = None
            self._set("not_connected")

    # --------------------------------------------------------------- helpers

    def _set(self, state: State, error: str | None = None) -> None:
        if state != self._state:
            self._since = now_iso()
        self._state = state
        self._error = error
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for_state(self, *states: State) -> HubStatus:
        """Wait (unbounded: callers bound it) until the state is one of ``states``."""
        while self._state not in states:
            await self._changed.wait()
        return self.status()

    async def _write(self, relationship: Relationship) -> None:
        await asyncio.to_thread(files.write_json, self._path, relationship.document())

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._task = task
        return task

    async def _cancel_task(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
