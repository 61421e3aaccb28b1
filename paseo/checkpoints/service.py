"""The checkpoint service: a checkpoint at each turn boundary of every agent whose cwd is in a
git working tree, and the list, diff, undo and redo of its turns.

Turns are observed through the agent port (``AgentEvents.subscribe``): ``turn_started`` takes
the *before* snapshot and stores it as a commit under ``refs/paseo/checkpoints/<agent>/<turn>``;
the turn's end (``turn_completed``, ``turn_failed``, ``turn_canceled``) takes the *after*
snapshot as a commit whose parent is the before one and moves the ref to it. So a turn is one
ref; its change is ``parent → commit``. Work is serialized per agent (a lock) and runs in a task
of its own, so one agent's snapshot never delays another's.

An undo is recorded before it writes anything, as ``refs/paseo/checkpoints/<agent>/undo/<k>``:
a commit of the working tree just before the undo (the files it overwrote), with the paths it
restored in its body; ``redo`` takes the newest back and drops it.

What the service keeps outside the repository is ``$PASEO_HOME/checkpoints/<agent>/``: the
working tree the refs are in (``state.json``, so a purge after the agent's record is gone still
finds them) and the cached index that makes snapshots cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.agents import AgentObserver, Agents, Subscription, TimelineEntry
from paseo_hookspecs.atomic import atomic_write_json, read_json
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.events import TurnCanceled, TurnCompleted, TurnFailed, TurnStarted
from paseo_hookspecs.records import AgentRecord

from paseo.git.runner import GitCommandFailed, GitRunner
from paseo.services import ConfigView

if TYPE_CHECKING:
    # The git plumbing is imported by the first checkpoint, listing or restore: an empty
    # daemon (no turn yet) never runs it.
    from paseo.checkpoints.plumbing import Change, RefInfo, Repo

log = logging.getLogger("paseo.checkpoints")

STATE_DIR = "checkpoints"
"""``$PASEO_HOME/checkpoints/<agentId>/``: the service's own state per agent."""

SETTLE_TIMEOUT = 10.0
"""Seconds a read waits for the after-checkpoint of a turn that has ended but whose end event is
still on its way to this service (an agent reported idle a moment before it arrives)."""

_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Turn:
    """One checkpointed turn: ``before`` is ``None``-free, ``after`` is ``None`` while it runs
    (or when the daemon stopped before it ended)."""

    number: int
    before: str
    after: str | None
    startedAt: str | None
    endedAt: str | None
    outcome: str | None
    filesChanged: int | None


@dataclass(frozen=True)
class Undo:
    number: int
    ref: RefInfo
    turn: int
    paths: list[str]
    before: str
    at: str | None


@dataclass
class History:
    """An agent's checkpoints: its working tree (``None`` with ``reason``), turns, undos."""

    agent: AgentRecord
    repo: Repo | None
    reason: str | None = None
    turns: list[Turn] = field(default_factory=list)
    undos: list[Undo] = field(default_factory=list)

    def turn(self, number: int | None) -> Turn:
        """Turn ``number`` (``None``: the last), which must have ended."""
        if not self.turns:
            raise NotFound(f"agent {self.agent.id} has no checkpointed turn yet")
        if number is None:
            chosen = self.turns[-1]
        else:
            found = [t for t in self.turns if t.number == number]
            if not found:
                have = ", ".join(str(t.number) for t in self.turns)
                raise NotFound(
                    f"agent {self.agent.id} has no checkpoint of turn {number} (kept: {have})",
                    data={"turn": number},
                )
            chosen = found[0]
        if chosen.after is None:
            raise Conflict(
                f"turn {chosen.number} of agent {self.agent.id} has not ended: it has no "
                "after-checkpoint yet",
                data={"turn": chosen.number},
            )
        return chosen


@dataclass
class Restoration:
    """What an undo or redo did: restored paths, paths already so, and conflicts left alone."""

    agentId: str
    turn: int
    restored: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def _parse(refs: list[RefInfo], agent_id: str) -> tuple[list[Turn], list[Undo]]:
    from paseo.checkpoints.plumbing import REF_ROOT

    prefix = f"{REF_ROOT}/{agent_id}/"
    turns: list[Turn] = []
    undos: list[Undo] = []
    for ref in refs:
        rest = ref.name[len(prefix) :]
        body = ref.body
        if rest.isdigit():
            ended = body.get("phase") == "after" and ref.parent is not None
            turns.append(
                Turn(
                    number=int(rest),
                    before=ref.parent if ended and ref.parent else ref.commit,
                    after=ref.commit if ended else None,
                    startedAt=body.get("startedAt"),
                    endedAt=body.get("endedAt") if ended else None,
                    outcome=body.get("outcome") if ended else None,
                    filesChanged=body.get("files") if ended else None,
                )
            )
        elif rest.startswith("undo/") and rest[5:].isdigit():
            undos.append(
                Undo(
                    number=int(rest[5:]),
                    ref=ref,
                    turn=int(body.get("turn", 0)),
                    paths=[str(p) for p in body.get("paths", [])],
                    before=str(body.get("before", "")),
                    at=body.get("at"),
                )
            )
    return sorted(turns, key=lambda t: t.number), sorted(undos, key=lambda u: u.number)


def _message(title: str, body: dict[str, Any]) -> str:
    return f"{title}\n\n{json.dumps(body, sort_keys=True)}\n"


class _Observer(AgentObserver):
    def __init__(self, service: CheckpointService) -> None:
        self.service = service

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        event = entry.event
        if isinstance(event, TurnStarted):
            self.service.schedule(agent_id, lambda: self.service.begin(agent_id, entry.timestamp))
        elif isinstance(event, TurnCompleted | TurnFailed | TurnCanceled):
            outcome = event.type.removeprefix("turn_")
            self.service.schedule(
                agent_id, lambda: self.service.end(agent_id, entry.timestamp, outcome)
            )


class CheckpointService:
    """See the module docstring. Built by the composition root with the git runner, the agent
    port, the live config and ``$PASEO_HOME``."""

    name = "checkpoints"

    def __init__(
        self,
        *,
        runner: GitRunner,
        agents: Agents,
        config: ConfigView,
        home: Path,
        settle_timeout: float = SETTLE_TIMEOUT,
    ) -> None:
        self._runner = runner
        self._settle_timeout = settle_timeout
        self._agents = agents
        self._config = config
        self._root = home / STATE_DIR
        self._locks: dict[str, asyncio.Lock] = {}
        self._open: dict[str, int] = {}
        self._repos: dict[tuple[str, str], Repo] = {}
        """Agent id → the turn whose before-checkpoint was taken and whose end is awaited."""
        self._ended = asyncio.Condition()
        """Notified whenever a turn leaves :attr:`_open`."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._subscription: Subscription | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._subscription = self._agents.subscribe(_Observer(self), name="checkpoints")

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
            self._subscription = None
        if self._tasks:
            # A checkpoint being written finishes (bounded by the runner's timeouts).
            await asyncio.wait(set(self._tasks), timeout=30)
        for task in self._tasks:
            task.cancel()

    @property
    def keep(self) -> int:
        return self._config.resolved.agents.checkpointsPerAgent

    def _lock(self, agent_id: str) -> asyncio.Lock:
        return self._locks.setdefault(agent_id, asyncio.Lock())

    def schedule(self, agent_id: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` under the agent's lock in a task of its own (asyncio locks are FIFO,
        so one agent's checkpoints are taken in the order its turns happened)."""

        async def run() -> None:
            async with self._lock(agent_id):
                try:
                    await work()
                except Exception:
                    log.exception("checkpoint of agent %s failed", agent_id)

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ state

    def _dir(self, agent_id: str) -> Path:
        if not _SAFE_ID.match(agent_id):
            raise InvalidParams(f"agent id {agent_id!r} cannot name a checkpoint ref")
        return self._root / agent_id

    def _prefix(self, agent_id: str) -> str:
        from paseo.checkpoints.plumbing import REF_ROOT

        return f"{REF_ROOT}/{agent_id}"

    async def _repo_of(self, record: AgentRecord) -> Repo | None:
        """The working tree of the agent's cwd (remembered once found: a cwd does not move)."""
        key = (record.id, record.cwd)
        repo = self._repos.get(key)
        if repo is None or not await asyncio.to_thread(repo.toplevel.is_dir):
            from paseo.checkpoints.plumbing import Repo

            repo = await Repo.find(self._runner, Path(record.cwd))
            if repo is None:
                self._repos.pop(key, None)
                return None
            self._repos[key] = repo
        return repo

    def _remember(self, agent_id: str, repo: Repo) -> None:
        state = self._dir(agent_id) / "state.json"
        if not state.exists():
            state.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(state, {"toplevel": str(repo.toplevel)})

    # ------------------------------------------------------------------ turn boundaries

    async def begin(self, agent_id: str, timestamp: str) -> None:
        """The before-checkpoint of a new turn."""
        if self.keep <= 0:
            return
        record = await self._agents.get(agent_id)
        repo = await self._repo_of(record)
        if repo is None:
            return
        self._remember(agent_id, repo)
        turns, _ = _parse(await repo.refs(self._prefix(agent_id)), agent_id)
        number = turns[-1].number + 1 if turns else 1
        seed = (turns[-1].after or turns[-1].before) if turns else None
        tree = await repo.snapshot(self._dir(agent_id) / "index", seed)
        body = {"phase": "before", "turn": number, "startedAt": timestamp}
        commit = await repo.commit(tree, None, _message(f"paseo: turn {number} before", body))
        await repo.set_ref(f"{self._prefix(agent_id)}/{number}", commit)
        self._open[agent_id] = number

    async def end(self, agent_id: str, timestamp: str, outcome: str) -> None:
        """The after-checkpoint of the open turn, then pruning by count."""
        number = self._open.pop(agent_id, None)
        async with self._ended:
            self._ended.notify_all()
        if number is None:
            return  # the turn began before this daemon, or while checkpoints were off
        record = await self._agents.get(agent_id)
        repo = await self._repo_of(record)
        if repo is None:
            return
        turns, undos = _parse(await repo.refs(self._prefix(agent_id)), agent_id)
        started = [t for t in turns if t.number == number and t.after is None]
        if not started:
            return
        turn = started[0]
        tree = await repo.snapshot(self._dir(agent_id) / "index", turn.before)
        changed = await repo.changes(turn.before, tree)
        body = {
            "phase": "after",
            "turn": number,
            "startedAt": turn.startedAt,
            "endedAt": timestamp,
            "outcome": outcome,
            "files": len(changed),
        }
        title = f"paseo: turn {number} {outcome}"
        commit = await repo.commit(tree, turn.before, _message(title, body))
        await repo.set_ref(f"{self._prefix(agent_id)}/{number}", commit)
        await self._prune(repo, agent_id, [*turns], undos)

    async def _prune(self, repo: Repo, agent_id: str, turns: list[Turn], undos: list[Undo]) -> None:
        keep = max(self.keep, 1)
        prefix = self._prefix(agent_id)
        old = [f"{prefix}/{t.number}" for t in turns[: max(0, len(turns) - keep)]]
        old += [u.ref.name for u in undos[: max(0, len(undos) - keep)]]
        await repo.delete_refs(old)

    # ------------------------------------------------------------------ reads

    async def _settle(self, record: AgentRecord) -> None:
        """Let an ended turn's checkpoint land before reading: an agent not at work whose turn
        is still open here has its end event in flight (bounded by :data:`SETTLE_TIMEOUT`)."""
        if record.lastStatus in ("running", "initializing"):
            return
        if record.id in self._open:
            async with self._ended:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._ended.wait_for(lambda: record.id not in self._open),
                        self._settle_timeout,
                    )
        if record.id in self._locks:
            async with self._lock(record.id):
                pass  # the work scheduled before now has finished
        if record.id in self._open:
            fresh = await self._agents.get(record.id)
            if fresh.lastStatus not in ("running", "initializing"):
                # The end never came (dropped when this subscriber fell behind): the turn
                # keeps only its before-checkpoint rather than blocking undo for good.
                self._open.pop(record.id, None)
                log.warning("agent %s is idle but its turn never ended here", record.id)

    async def history(self, reference: str, *, settle: bool = True) -> History:
        """The agent named ``reference`` (id, id prefix or title) and its checkpoints."""
        record = await self._agents.get(reference)
        if settle:
            await self._settle(record)
        repo = await self._repo_of(record)
        if repo is None:
            return History(
                record,
                None,
                f"{record.cwd} is not inside a git working tree: no checkpoints are taken "
                "for this agent",
            )
        turns, undos = _parse(await repo.refs(self._prefix(record.id)), record.id)
        reason = None
        if self.keep <= 0:
            reason = "checkpoints are off (agents.checkpointsPerAgent is 0)"
        elif not turns:
            reason = "no turn has started since checkpoints began for this agent"
        return History(record, repo, reason, turns, undos)

    async def diff(self, reference: str, turn: int | None) -> tuple[History, list[tuple[int, str]]]:
        """The unified diff of one turn, or of every ended turn (each its own section)."""
        history = await self.history(reference)
        if history.repo is None:
            raise Conflict(history.reason or "no checkpoints", data={"agentId": history.agent.id})
        chosen = (
            [history.turn(turn)]
            if turn is not None
            else [t for t in history.turns if t.after is not None]
        )
        patches = []
        for item in chosen:
            assert item.after is not None
            patches.append((item.number, await history.repo.patch(item.before, item.after)))
        return history, patches

    # ------------------------------------------------------------------ undo and redo

    def _refuse_running(self, record: AgentRecord) -> None:
        status = record.lastStatus
        if status in ("running", "initializing"):
            raise Conflict(
                f"agent {record.id} is {status}: undo would race its edits; wait "
                f"until it is idle (`paseo wait {record.id[:8]}`) or stop it first",
                data={"agentId": record.id, "status": status},
            )

    @contextlib.asynccontextmanager
    async def _restoring(self, reference: str) -> AsyncIterator[tuple[AgentRecord, History, Repo]]:
        """What undo and redo work on: the agent, its settled history and checkpoint repo,
        under the agent's lock. A running agent is refused before settling and again under the
        lock (it may have started meanwhile); no repo is a ``Conflict`` with the reason."""
        record = await self._agents.get(reference)
        self._refuse_running(record)
        await self._settle(record)
        async with self._lock(record.id):
            history = await self.history(record.id, settle=False)
            self._refuse_running(history.agent)
            repo = history.repo
            if repo is None:
                raise Conflict(history.reason or "no checkpoints", data={"agentId": record.id})
            yield record, history, repo

    async def undo(self, reference: str, turn: int | None) -> Restoration:
        """Restore the files turn ``turn`` (default: the last) touched to their state before it,
        each one only if it is still as the turn left it; the rest are conflicts."""
        from paseo.checkpoints.plumbing import GITLINK, Change

        async with self._restoring(reference) as (record, history, repo):
            chosen = history.turn(turn)
            assert chosen.after is not None
            touched = [
                c
                for c in await repo.changes(chosen.before, chosen.after)
                if GITLINK not in (c.old.mode if c.old else "", c.new.mode if c.new else "")
            ]
            now = await repo.snapshot(self._dir(record.id) / "index", chosen.after)
            since = {c.path: c for c in await repo.changes(chosen.after, now)}
            report = Restoration(record.id, chosen.number)
            back: list[Change] = []
            for change in touched:
                later = since.get(change.path)
                if later is None:
                    back.append(Change(change.path, change.new, change.old))
                elif later.new == change.old:
                    report.unchanged.append(change.path)
                else:
                    report.conflicts.append(change.path)
            if back:
                self._remember(record.id, repo)
                number = history.undos[-1].number + 1 if history.undos else 1
                body = {
                    "kind": "undo",
                    "turn": chosen.number,
                    "before": chosen.before,
                    "paths": [c.path for c in back],
                    "at": utc_now(),
                }
                title = f"paseo: undo of turn {chosen.number}"
                commit = await repo.commit(now, chosen.after, _message(title, body))
                await repo.set_ref(f"{self._prefix(record.id)}/undo/{number}", commit)
                await repo.restore(chosen.before, back)
                report.restored = [c.path for c in back]
            return report

    async def redo(self, reference: str) -> Restoration:
        """Take the newest undo back: each path it restored gets what the undo overwrote, if
        it is still as the undo left it."""
        async with self._restoring(reference) as (record, history, repo):
            if not history.undos:
                raise NotFound(f"nothing to redo: agent {record.id} has no undo recorded")
            last = history.undos[-1]
            paths = set(last.paths)
            now = await repo.snapshot(self._dir(record.id) / "index", last.ref.tree)
            drifted = {c.path: c for c in await repo.changes(last.before, now)}
            overwritten = await repo.changes(last.before, last.ref.commit)
            wanted = {c.path: c for c in overwritten if c.path in paths}
            report = Restoration(record.id, last.turn)
            forward: list[Change] = []
            for path in sorted(paths):
                want = wanted.get(path)
                if want is None:
                    report.unchanged.append(path)
                elif path not in drifted:
                    forward.append(want)
                elif drifted[path].new == want.new:
                    report.unchanged.append(path)
                else:
                    report.conflicts.append(path)
            await repo.restore(last.ref.commit, forward)
            await repo.delete_refs([last.ref.name])
            report.restored = [c.path for c in forward]
            return report

    # ------------------------------------------------------------------ removal

    async def purge(self, agent_id: str) -> None:
        """Remove every checkpoint of a purged agent and the service's state of it. Never
        raises: a repository gone or unreadable leaves only unreachable refs behind."""
        try:
            directory = self._dir(agent_id)
        except InvalidParams:
            return
        state = directory / "state.json"
        try:
            toplevel = Path(str(read_json(state)["toplevel"])) if state.exists() else None
        except (OSError, ValueError, KeyError, TypeError):
            toplevel = None
        if toplevel is not None and toplevel.is_dir():
            from paseo.checkpoints.plumbing import Repo

            repo = Repo(self._runner, toplevel)
            try:
                refs = await repo.refs(self._prefix(agent_id))
                await repo.delete_refs(ref.name for ref in refs)
            except (GitCommandFailed, OSError) as exc:
                log.warning("could not remove agent %s's checkpoints: %s", agent_id, exc)
        with contextlib.suppress(OSError):
            await asyncio.to_thread(shutil.rmtree, directory, True)
        self._open.pop(agent_id, None)
        self._locks.pop(agent_id, None)
        for key in [key for key in self._repos if key[0] == agent_id]:
            del self._repos[key]
