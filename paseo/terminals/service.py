"""The ``terminals`` kernel service: workspace-scoped PTY programs the daemon keeps and streams.

Terminals are live state, never persisted as records of their own: each carries the
``workspaceId`` it was placed in (``--cwd`` is placed through :class:`TerminalPlacement`, the
same entry point agents use), workspace-scoped lists show only that workspace's terminals, and
legacy terminals without an owner are visible to unscoped lists only and count for no
workspace. What is durable is the process: every live terminal's session leader has a
``ManagedProcessRecord`` of kind :data:`PROCESS_KIND`, so the next boot reaps what a crashed
daemon left.

Notifications: ``terminal.changed`` on :data:`STREAM` (created, activity or state changed,
removed); ``terminal.output`` and ``terminal.exited`` on ``terminal:<id>``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, Unavailable
from paseo_hookspecs.records import WorkspaceRecord
from paseo_hookspecs.store import ManagedProcessRepository, WorkspaceRepository
from paseo_hookspecs.terminals import TerminalProfile

from paseo.processes import ProcessRecords, iso_now, reap_orphans, reap_recorded_session
from paseo.services import ConfigView, Publisher
from paseo.terminals.models import TerminalInfo
from paseo.terminals.profiles import ProfileSource, argv_for, effective_profiles
from paseo.terminals.pty import InputOverflow, PtyProcess

if TYPE_CHECKING:
    from paseo.terminals.terminal import Terminal

log = logging.getLogger("paseo.terminals")

STREAM = "terminals"
"""Where ``terminal.changed`` is published."""

STREAM_ACCESS = frozenset({"local", "remote"})

PROCESS_KIND = "terminal"
"""``owner.kind`` of the managed-process records of terminal sessions."""

STOP_TIMEOUT = 10.0
"""How long stopping the service waits for every terminal's session to be reaped."""

KEEP_EXITED = 32
"""Exited terminals kept listed (with their exit status and capture) before the oldest go."""

_DROPPED_ENV = ("COLUMNS", "LINES", "TERMCAP")
"""Inherited variables that would override the PTY's own size and type."""


def stream_of(terminal_id: str) -> str:
    """The stream carrying one terminal's output and exit."""
    return f"terminal:{terminal_id}"


class TerminalStore(Protocol):
    """The store repositories terminals use."""

    @property
    def workspaces(self) -> WorkspaceRepository: ...

    @property
    def managed_processes(self) -> ManagedProcessRepository: ...


class TerminalPlacement(Protocol):
    """Where a terminal opened on a directory belongs (the workspaces service offers this)."""

    async def ensure_workspace_for_cwd(self, cwd: str) -> WorkspaceRecord:
        """The workspace of ``cwd``, created when missing; raises ``NotFound`` or
        ``InvalidParams`` for a directory that cannot be opened."""
        ...


class TerminalService:
    """See the module docstring."""

    name = "terminals"

    def __init__(
        self,
        *,
        store: TerminalStore,
        publisher: Publisher,
        config: ConfigView,
        placement: TerminalPlacement,
        profiles: ProfileSource,
        keep_exited: int = KEEP_EXITED,
        on_activity: Callable[[set[str]], None] | None = None,
    ) -> None:
        self._store = store
        self._publisher = publisher
        self._config = config
        self._placement = placement
        self._provider_profiles = profiles
        self._keep_exited = keep_exited
        self._records = ProcessRecords(store.managed_processes, kind=PROCESS_KIND, provider="paseo")
        self._terminals: dict[str, Terminal] = {}
        self._starting = 0
        """Creations past the cap check whose terminal is not listed yet."""
        self._on_activity = on_activity
        """Called after each ``terminal.changed`` (a terminal came, went, or its activity
        flipped) with :meth:`active_workspaces`: what makes a workspace's derived status
        change."""

    # -------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        """Reap terminal sessions a crashed daemon left behind."""
        await reap_orphans(self._store.managed_processes, PROCESS_KIND, reap_recorded_session)
        self._publisher.register_stream(STREAM, STREAM_ACCESS)

    async def stop(self) -> None:
        """Kill every terminal and wait (bounded) until their sessions are reaped."""
        terminals = list(self._terminals.values())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                asyncio.gather(*(self._end(t) for t in terminals), return_exceptions=True),
                STOP_TIMEOUT,
            )
        self._terminals.clear()

    # ---------------------------------------------------------------- queries

    def profiles(self) -> list[TerminalProfile]:
        """The profiles in force (``daemon.terminalProfiles``, read at the moment of use)."""
        return effective_profiles(
            self._config.resolved.daemon.terminalProfiles, providers=self._provider_profiles
        )

    def terminals(self, workspace_id: str | None = None) -> list[TerminalInfo]:
        """Terminals in creation order: one workspace's, or all (legacy ones included)."""
        return [
            t.info()
            for t in self._terminals.values()
            if workspace_id is None or t.spec.workspace_id == workspace_id
        ]

    def get(self, terminal_id: str) -> Terminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise NotFound(f"no terminal {terminal_id!r}", data={"terminalId": terminal_id})
        return terminal

    def active_workspaces(self) -> set[str]:
        """The workspaces with a terminal that produced output within the activity window."""
        return {
            t.spec.workspace_id
            for t in self._terminals.values()
            if t.active and t.spec.workspace_id is not None
        }

    def activity(self, workspace_id: str) -> bool:
        """Whether a terminal of ``workspace_id`` produced output within the activity window
        (what workspace status derivation counts as ``running``)."""
        return any(
            t.active for t in self._terminals.values() if t.spec.workspace_id == workspace_id
        )

    def capture(
        self, terminal_id: str, start: int | None, end: int | None, *, ansi: bool
    ) -> tuple[list[str], int]:
        """Lines of the scrollback plus screen, and how many lines there are in all."""
        screen = self.get(terminal_id).screen
        return screen.capture(start, end, ansi=ansi), len(screen.lines(ansi=False))

    def snapshot(self, terminal_id: str) -> tuple[str, int, TerminalInfo]:
        """The current screen as ANSI text and the output offset it corresponds to."""
        terminal = self.get(terminal_id)
        return terminal.screen.snapshot(), terminal.offset, terminal.info()

    def scrollback(self, terminal_id: str) -> list[str]:
        """The lines kept above the screen as ANSI text, oldest first."""
        return list(self.get(terminal_id).screen.history)

    # ---------------------------------------------------------------- changes

    async def create(
        self,
        *,
        workspace_id: str | None = None,
        cwd: str | None = None,
        profile_id: str | None = None,
        prompt: str | None = None,
        columns: int = 80,
        rows: int = 24,
        name: str | None = None,
    ) -> TerminalInfo:
        """Start a profile's program in a workspace's exact directory (``Unavailable`` when
        ``daemon.maxTerminals`` are running). ``name`` is its title until the program sets one
        (default: the profile's name)."""
        self._check_cap()
        self._starting += 1
        try:
            return await self._create(
                workspace_id=workspace_id,
                cwd=cwd,
                profile_id=profile_id,
                prompt=prompt,
                columns=columns,
                rows=rows,
                name=name,
            )
        finally:
            self._starting -= 1

    def _check_cap(self) -> None:
        """Refuse a terminal beyond ``daemon.maxTerminals`` running (each holds a program, a
        pty and an emulator: 200 of them were once made by one client without a limit)."""
        cap = self._config.resolved.daemon.maxTerminals
        running = self._starting + sum(1 for t in self._terminals.values() if t.state == "running")
        if running >= cap:
            raise Unavailable(
                f"{running} terminals are running, the most daemon.maxTerminals allows ({cap}):"
                " kill one first (paseo terminal kill ID) or raise daemon.maxTerminals in "
                "config.json",
                data={"running": running, "maxTerminals": cap},
            )

    async def _create(
        self,
        *,
        workspace_id: str | None,
        cwd: str | None,
        profile_id: str | None,
        prompt: str | None,
        columns: int,
        rows: int,
        name: str | None,
    ) -> TerminalInfo:
        # The emulator (pyte) loads with the first terminal, not with the daemon.
        from paseo.terminals.terminal import Terminal, TerminalSpec

        workspace = await self._workspace(workspace_id, cwd)
        profile = self._profile(profile_id)
        argv = argv_for(profile, prompt)
        terminal_id = uuid.uuid4().hex
        try:
            process = await PtyProcess.spawn(
                argv,
                cwd=workspace.cwd,
                env=self._environment(workspace, terminal_id),
                columns=columns,
                rows=rows,
            )
        except OSError as exc:
            raise InvalidParams(
                f"cannot start {argv[0]!r}: {exc.strerror or exc}",
                data={"profileId": profile.id},
            ) from exc
        scrollback = self._config.resolved.daemon.terminalScrollback
        terminal = Terminal(
            TerminalSpec(
                terminal_id=terminal_id,
                workspace_id=workspace.workspaceId,
                profile_id=profile.id,
                name=name or profile.name,
                cwd=workspace.cwd,
                created_at=iso_now(),
            ),
            process,
            columns=columns,
            rows=rows,
            scrollback=scrollback.lines,
            scrollback_bytes=scrollback.bytes,
            output=self._publish_output,
            changed=self._publish_changed,
            exited=self._on_exit,
        )
        try:
            terminal.record_id = await self._records.record(
                process.pid,
                argv,
                {"terminalId": terminal_id, "workspaceId": workspace.workspaceId},
            )
        except BaseException:
            await process.kill(grace=0)
            process.close()
            raise
        self._publisher.register_stream(stream_of(terminal_id), STREAM_ACCESS)
        self._terminals[terminal_id] = terminal
        terminal.start()
        self._publish_changed(terminal)
        return terminal.info()

    async def kill(self, terminal_id: str) -> TerminalInfo:
        """End the terminal's program (hang-up, then SIGKILL of its session) and forget it."""
        terminal = self.get(terminal_id)
        await self._end(terminal)
        self._terminals.pop(terminal_id, None)
        info = terminal.info()
        self._publish(STREAM, "terminal.changed", self._changed_payload(info, removed=True))
        return info

    def input(self, terminal_id: str, data: bytes) -> None:
        terminal = self._running(terminal_id)
        try:
            terminal.write(data)
        except InputOverflow as exc:
            raise Conflict(str(exc), data={"terminalId": terminal_id}) from exc

    def resize(self, terminal_id: str, columns: int, rows: int) -> TerminalInfo:
        terminal = self._running(terminal_id)
        terminal.resize(columns, rows)
        info = terminal.info()
        self._publish(STREAM, "terminal.changed", self._changed_payload(info))
        return info

    # --------------------------------------------------------------- internals

    def _running(self, terminal_id: str) -> Terminal:
        terminal = self.get(terminal_id)
        if terminal.state != "running":
            raise Conflict(f"terminal {terminal_id!r} has exited", data={"terminalId": terminal_id})
        return terminal

    async def _workspace(self, workspace_id: str | None, cwd: str | None) -> WorkspaceRecord:
        if workspace_id is not None:
            workspace = await self._store.workspaces.get(workspace_id)
            if workspace is None:
                raise NotFound(f"no workspace {workspace_id!r}", data={"workspaceId": workspace_id})
            if workspace.archivedAt is not None:
                raise Conflict(
                    f"workspace {workspace_id!r} is archived", data={"workspaceId": workspace_id}
                )
            if not await asyncio.to_thread(os.path.isdir, workspace.cwd):
                raise Conflict(
                    f"the directory of workspace {workspace_id!r} is missing: {workspace.cwd}",
                    data={"workspaceId": workspace_id, "cwd": workspace.cwd},
                )
            return workspace
        if cwd is None:
            raise InvalidParams("give workspaceId or cwd")
        return await self._placement.ensure_workspace_for_cwd(cwd)

    def _profile(self, profile_id: str | None) -> TerminalProfile:
        profiles = self.profiles()
        if not profiles:
            raise InvalidParams("no terminal profiles are configured (daemon.terminalProfiles)")
        if profile_id is None:
            return profiles[0]
        for profile in profiles:
            if profile.id == profile_id:
                return profile
        raise NotFound(
            f"no terminal profile {profile_id!r}",
            data={"profileId": profile_id, "profiles": [p.id for p in profiles]},
        )

    @staticmethod
    def _environment(workspace: WorkspaceRecord, terminal_id: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env.update(
            TERM="xterm-256color",
            COLORTERM="truecolor",
            PASEO_TERMINAL_ID=terminal_id,
            PASEO_WORKSPACE_ID=workspace.workspaceId,
        )
        if workspace.kind == "worktree" and workspace.worktreeRoot:
            env["PASEO_WORKTREE_PATH"] = workspace.worktreeRoot
            if workspace.mainRepoRoot:
                env["PASEO_SOURCE_CHECKOUT_PATH"] = workspace.mainRepoRoot
            if workspace.branch:
                env["PASEO_BRANCH_NAME"] = workspace.branch
        return env

    async def _end(self, terminal: Terminal) -> None:
        if terminal.state == "running":
            await terminal.process.kill()
        await terminal.done.wait()

    async def _on_exit(self, terminal: Terminal) -> None:
        if terminal.record_id is not None:
            try:
                await self._records.forget(terminal.record_id)
            except Exception:
                log.exception("cannot forget the process record of terminal %s", terminal)
        self._publish(
            stream_of(terminal.terminal_id),
            "terminal.exited",
            {
                "terminalId": terminal.terminal_id,
                "exitCode": terminal.exit_code,
                "signal": terminal.signal,
            },
        )
        if terminal.terminal_id in self._terminals:
            self._publish_changed(terminal)
        self._forget_oldest_exited()

    def _forget_oldest_exited(self) -> None:
        """Exited terminals stay listed (status and capture) until killed, but only the most
        recent :attr:`_keep_exited`: each holds its screen and scrollback."""
        exited = [t for t in self._terminals.values() if t.state == "exited"]
        for terminal in exited[: max(0, len(exited) - self._keep_exited)]:
            del self._terminals[terminal.terminal_id]
            self._publish(
                STREAM, "terminal.changed", self._changed_payload(terminal.info(), removed=True)
            )

    def _publish_output(self, terminal: Terminal, offset: int, data: bytes, dropped: int) -> None:
        self._publish(
            stream_of(terminal.terminal_id),
            "terminal.output",
            {
                "terminalId": terminal.terminal_id,
                "offset": offset,
                "data": base64.b64encode(data).decode("ascii"),
                "dropped": dropped,
            },
        )

    def _changed_payload(self, info: TerminalInfo, *, removed: bool = False) -> dict[str, Any]:
        return {
            "terminal": info.model_dump(mode="json"),
            "removed": removed,
            "workspaceActive": (
                self.activity(info.workspaceId) if info.workspaceId is not None else None
            ),
        }

    def _publish_changed(self, terminal: Terminal) -> None:
        self._publish(STREAM, "terminal.changed", self._changed_payload(terminal.info()))

    def _publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        try:
            self._publisher.publish(stream, method, payload)
        except Exception:
            log.exception("cannot publish %s on %s", method, stream)
        if method == "terminal.changed" and self._on_activity is not None:
            self._on_activity(self.active_workspaces())
