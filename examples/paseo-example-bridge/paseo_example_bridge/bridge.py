"""The bridge: agents for the folder's prompts, their replies and permissions as files.

Two halves, both on the agent port only:

- **The poll loop** (:meth:`Bridge.run`) reads the folder every ``pollSeconds``: a new
  ``NAME.prompt`` becomes an agent (``AgentControl.create``, the prompt as its initial
  prompt), an ``NAME.answer`` answers the request in ``NAME.permission.json``
  (``AgentControl.answer_permission``).
- **The observer** (:class:`Bridge` is an ``AgentObserver`` subscribed with
  ``AgentEvents.subscribe``) writes what agents do beside their prompt: every timeline entry to
  ``NAME.log``, the reply after each turn, each permission request as a file.

Which agent belongs to which prompt is kept on the agents themselves, as two labels (the
folder's key and the prompt's name), so a restarted daemon (or bridge) finds its agents with
one ``AgentControl.list`` and never starts a second agent for a prompt. File I/O runs in worker
threads: the callbacks run on the daemon's loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.agents import (
    AgentCreate,
    AgentObserver,
    AgentQuery,
    Agents,
    PermissionOutcome,
    RecordChange,
    TimelineEntry,
)
from paseo_hookspecs.atomic import atomic_write_text
from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.events import PermissionRequest
from paseo_hookspecs.records import AgentRecord

from paseo_example_bridge.folder import BadAnswer, Files, answer_names, parse_answer, prompt_names
from paseo_example_bridge.settings import BridgeSettings

FOLDER_LABEL = "paseo-bridge"
"""Label: which folder an agent was started for (a short hash of its path)."""
NAME_LABEL = "paseo-bridge-prompt"
"""Label: the name of the prompt the agent was started for."""

T = TypeVar("T")


def folder_key(folder: Path) -> str:
    return hashlib.sha256(str(folder).encode()).hexdigest()[:12]


class Bridge(AgentObserver):
    """See the module docstring."""

    def __init__(
        self, agents: Agents, settings: BridgeSettings, *, home: Path, log: logging.Logger
    ) -> None:
        self._agents = agents
        self._settings = settings
        self.folder = settings.folder_path(home)
        self._cwd = settings.cwd_path(home)
        self._key = folder_key(self.folder)
        self._log = log
        self._names: dict[str, str] = {}
        """Agent id -> prompt name, for this folder's agents."""
        self._agent_of: dict[str, str] = {}
        """Prompt name -> agent id."""
        self._replies: dict[str, str | None] = {}
        """Agent id -> the reply last written."""

    # --- the poll loop ----------------------------------------------------------------------

    async def run(self) -> None:
        """Recover this folder's agents, then read the folder until cancelled."""
        await asyncio.to_thread(self.folder.mkdir, parents=True, exist_ok=True)
        await self._recover()
        while True:
            try:
                await self.poll()
            except (OSError, PaseoError) as exc:
                # A file that vanished mid-read, a folder briefly unreadable: the next pass
                # sees the folder again.
                self._log.warning("reading %s: %s", self.folder, exc)
            await asyncio.sleep(self._settings.pollSeconds)

    async def _recover(self) -> None:
        cursor: str | None = None
        query = AgentQuery(labels={FOLDER_LABEL: self._key}, include_archived=True)
        while True:
            page = await self._agents.list(query, cursor=cursor, limit=200)
            for record in page.items:
                self._remember(record)
            cursor = page.next_cursor
            if cursor is None:
                return

    async def poll(self) -> None:
        """One pass over the folder: new prompts, then waiting answers."""
        for name in await asyncio.to_thread(prompt_names, self.folder):
            files = Files(self.folder, name)
            # NAME.agent also keeps a prompt whose agent was deleted from starting again.
            if name in self._agent_of or await _exists(files.agent):
                continue
            if not await _exists(files.error):
                await self._start(files)
        for name in await asyncio.to_thread(answer_names, self.folder):
            await self._answer(Files(self.folder, name))

    async def _start(self, files: Files) -> None:
        text = await asyncio.to_thread(files.prompt.read_text, encoding="utf-8")
        if not text.strip():
            return  # still being written, or empty: nothing to ask yet
        spec = AgentCreate(
            provider=self._settings.provider,
            modeId=self._settings.modeId,
            cwd=str(self._cwd),
            title=files.name,
            labels={FOLDER_LABEL: self._key, NAME_LABEL: files.name},
            initialPrompt=text,
        )
        try:
            record = await self._agents.create(spec)
        except PaseoError as exc:
            self._log.warning("prompt %s: the agent was not created: %s", files.name, exc)
            await _run(files.write_error, f"the agent was not created: {exc}")
            return
        self._remember(record)
        await _run(atomic_write_text, files.agent, record.id + "\n")

    async def _answer(self, files: Files) -> None:
        agent_id = self._agent_of.get(files.name)
        text = await asyncio.to_thread(_read, files.answer)
        request_id = await asyncio.to_thread(files.pending_request_id)
        problem: str | None = None
        if agent_id is None or request_id is None:
            problem = f"{files.answer.name}: no permission request is waiting"
        else:
            try:
                answer = parse_answer(text or "")
                await self._agents.answer_permission(agent_id, request_id, answer)
            except BadAnswer as exc:
                problem = f"{files.answer.name}: {exc}"
            except PaseoError as exc:
                problem = f"{files.answer.name}: the answer was not given: {exc}"
        if problem is not None:
            await _run(files.write_error, problem)
        await asyncio.to_thread(files.answer.unlink, missing_ok=True)

    # --- the observer -----------------------------------------------------------------------

    def _remember(self, record: AgentRecord) -> str | None:
        """The prompt name of ``record`` when it is one of this folder's agents."""
        if record.labels.get(FOLDER_LABEL) != self._key:
            return None
        name = record.labels.get(NAME_LABEL)
        if name is None:
            return None
        self._names[record.id] = name
        self._agent_of[name] = record.id
        return name

    def _files(self, agent_id: str) -> Files | None:
        name = self._names.get(agent_id)
        return Files(self.folder, name) if name is not None else None

    async def on_record(self, change: RecordChange) -> None:
        name = self._remember(change.record)
        if name is None or change.kind == "deleted":
            return
        if change.record.lastStatus in ("idle", "error"):
            await self._write_reply(change.record.id, Files(self.folder, name))
        if change.record.lastStatus == "error" and change.record.lastError:
            await _run(Files(self.folder, name).write_error, change.record.lastError)

    async def _write_reply(self, agent_id: str, files: Files) -> None:
        reply = await self._agents.last_reply(agent_id)
        if reply is not None and reply != self._replies.get(agent_id):
            self._replies[agent_id] = reply
            await _run(files.write_reply, reply)

    async def on_event(self, agent_id: str, entry: TimelineEntry) -> None:
        files = self._files(agent_id)
        if files is not None:
            line = {"seq": entry.seq, "timestamp": entry.timestamp}
            line.update(entry.event.model_dump(mode="json", exclude_none=True))
            await _run(files.append_log, line)

    async def on_permission_requested(self, agent_id: str, request: PermissionRequest) -> None:
        files = self._files(agent_id)
        if files is not None and await asyncio.to_thread(files.pending_request_id) is None:
            await _run(files.write_permission, agent_id, request)

    async def on_permission_resolved(
        self, agent_id: str, request_id: str, outcome: PermissionOutcome
    ) -> None:
        files = self._files(agent_id)
        if files is None or await asyncio.to_thread(files.pending_request_id) != request_id:
            return
        await asyncio.to_thread(files.permission.unlink, missing_ok=True)
        # The next request still waiting, if any, takes the file.
        pending = await self._agents.pending_permissions(agent_id)
        if pending:
            await _run(files.write_permission, agent_id, pending[0])

    async def on_overflow(self, lost: int) -> None:
        """Fell behind: write every known agent's reply and waiting request again."""
        self._log.warning("the bridge fell behind by %d events; reading its agents again", lost)
        for agent_id, name in list(self._names.items()):
            files = Files(self.folder, name)
            try:
                await self._write_reply(agent_id, files)
                pending = await self._agents.pending_permissions(agent_id)
            except PaseoError:
                continue  # deleted meanwhile
            if pending and await asyncio.to_thread(files.pending_request_id) is None:
                await _run(files.write_permission, agent_id, pending[0])


async def _exists(path: Path) -> bool:
    return await asyncio.to_thread(path.exists)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


async def _run(function: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(function, *args)
