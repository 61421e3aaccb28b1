"""The metadata service: titles for untitled agents, branch names for new worktrees, commit
messages and change-request text, written by an internal structured-output agent.

``agents.metadataGeneration.providers`` picks the models: empty is Automatic (the first of
:data:`AUTOMATIC` whose provider is installed, enabled and ready), non-empty is
Manual (those entries, in order, and nothing else). Each attempt is one internal agent (never
listed, never asking for attention) given the task and a JSON schema for its answer, deleted
afterwards; the whole generation is bounded by :func:`generation_timeout`. Any failure — no
usable provider, a failed or slow turn, an answer that does not fit — makes the result
``None``, and every caller then does what it did without generation (a random branch name, no
title), silently: it is logged, never shown.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from paseo_hookspecs.errors import InvalidParams, PaseoError

from paseo.git.facts import default_branch
from paseo.git.runner import GitRunner
from paseo.metadata import tasks
from paseo.services import ConfigView

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT = 60.0
"""Seconds one generation may take in all (``PASEO_METADATA_TIMEOUT`` overrides it)."""

CONCURRENCY = 2
"""Internal agents running at once: five agents created together must not start ten programs
on a small machine. Waiting for a turn counts against the generation's time."""


def generation_timeout() -> float:
    raw = os.environ.get("PASEO_METADATA_TIMEOUT")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Candidate:
    provider: str
    model: str | None = None
    thinking: str | None = None


AUTOMATIC = (
    Candidate("claude", "claude-haiku-4-5"),
    Candidate("codex", "gpt-5.4-mini"),
    Candidate("opencode", "opencode/gpt-5-nano"),
)
"""What Automatic tries, in order (the TypeScript Paseo's choice)."""


PathCheck = Callable[[str, str], Awaitable[str]]
"""``(raw path, session kind) -> normalized path``, refusing what the caller may not open (the
workspaces service's check)."""


class MetadataAgents(Protocol):
    """What the metadata service needs of the agents room."""

    def usable(self, provider: str) -> bool:
        """Whether ``provider`` is installed, enabled and ready (Automatic's filter)."""

    async def answer(self, candidate: Candidate, cwd: str, task: tasks.Task, within: float) -> str:
        """Run one internal agent on ``task`` in ``cwd`` and return its final reply; raise when
        it fails or takes longer than ``within`` seconds. The agent is gone afterwards."""

    async def set_title(self, agent_id: str, title: str) -> None:
        """Give the agent ``title`` unless it has one by now (or is gone)."""

    async def remove_leftovers(self) -> int:
        """Delete the internal metadata agents a crashed daemon left; how many there were."""


class MetadataService:
    """See the module docstring."""

    name = "metadata"

    def __init__(
        self,
        *,
        agents: MetadataAgents,
        config: ConfigView,
        git: GitRunner | None = None,
        paths: PathCheck | None = None,
        timeout: Callable[[], float] = generation_timeout,
    ) -> None:
        self._agents = agents
        self._config = config
        self._git = git
        self._paths = paths
        self._timeout = timeout
        self._background: set[asyncio.Task[None]] = set()
        self._slots = asyncio.Semaphore(CONCURRENCY)

    async def start(self) -> None:
        # In the background: finding leftovers reads the store, which the daemon's readiness
        # need not wait for (a leftover is never listed and nothing else uses it).
        self._spawn(self._remove_leftovers())

    async def _remove_leftovers(self) -> None:
        left = await self._agents.remove_leftovers()
        if left:
            log.info("removed %d internal metadata agent(s) left by an earlier run", left)

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    # ------------------------------------------------------------------ generation

    def candidates(self) -> list[Candidate]:
        configured = self._config.resolved.agents.metadataGeneration.providers
        if configured:
            return [Candidate(p.provider, p.model, p.thinkingOptionId) for p in configured]
        return [c for c in AUTOMATIC if self._agents.usable(c.provider)]

    async def generate(self, task: tasks.Task, cwd: str) -> dict[str, str] | None:
        """The internal agent's answer to ``task``, or ``None`` (see the module docstring)."""
        deadline = time.monotonic() + self._timeout()
        for candidate in self.candidates():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                log.info("metadata %s: out of time", task.kind)
                return None
            try:
                reply = await self._attempt(candidate, cwd, task, deadline)
            except TimeoutError:
                log.info("metadata %s: out of time waiting for a turn", task.kind)
                return None
            except (PaseoError, RuntimeError, OSError, ValueError) as exc:
                log.info("metadata %s with %s failed: %s", task.kind, candidate.provider, exc)
                continue
            answer = tasks.parse_answer(reply, task.schema)
            if answer is not None:
                return answer
            log.info(
                "metadata %s with %s: the answer did not fit: %.200r",
                task.kind,
                candidate.provider,
                reply,
            )
        return None

    async def _attempt(
        self, candidate: Candidate, cwd: str, task: tasks.Task, deadline: float
    ) -> str:
        async with asyncio.timeout_at(_loop_time(deadline)):
            await self._slots.acquire()
        try:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            return await self._agents.answer(candidate, cwd, task, remaining)
        finally:
            self._slots.release()

    async def _cleaned(
        self, task: tasks.Task, cwd: str, clean: Callable[[dict[str, str]], T | None]
    ) -> T | None:
        answer = await self.generate(task, cwd)
        return clean(answer) if answer is not None else None

    async def title(self, first_prompt: str, cwd: str, served: str | None = None) -> str | None:
        task = dataclasses.replace(tasks.title_task(first_prompt), served=served)
        return await self._cleaned(task, cwd, tasks.clean_title)

    async def branch_name(self, description: str, cwd: str) -> str | None:
        return await self._cleaned(tasks.branch_task(description), cwd, tasks.clean_branch)

    async def commit_message(self, diff: str, cwd: str) -> tuple[str, str] | None:
        return await self._cleaned(tasks.commit_task(diff), cwd, tasks.clean_commit)

    async def change_request(self, diff: str, commits: str, cwd: str) -> tuple[str, str] | None:
        task = tasks.change_request_task(diff, commits)
        return await self._cleaned(task, cwd, tasks.clean_change_request)

    # ------------------------------------------------------------------ from a checkout

    def _runner(self) -> GitRunner:
        if self._git is None:
            raise RuntimeError("the metadata service has no git runner")
        return self._git

    async def checked_path(self, raw: str, session_kind: str) -> str:
        """``raw`` normalized, if a caller of ``session_kind`` may open it."""
        if self._paths is None:
            raise RuntimeError("the metadata service has no path check")
        return await self._paths(raw, session_kind)

    async def commit_message_for(self, cwd: str) -> tuple[str, str] | None:
        """A commit message for the staged change in the checkout at ``cwd`` (the uncommitted
        one when nothing is staged); ``InvalidParams`` when there is no change."""
        git = self._runner()
        flags = ["--no-color", "--no-ext-diff"]
        diff = (await git.run(["diff", "--cached", *flags], cwd=cwd)).stdout
        if not diff.strip():
            diff = (await git.run(["diff", "HEAD", *flags], cwd=cwd)).stdout
        if not diff.strip():
            raise InvalidParams(f"nothing to describe in {cwd}: no staged or uncommitted change")
        return await self.commit_message(diff, cwd)

    async def change_request_for(self, cwd: str, base: str | None) -> tuple[str, str] | None:
        """Change-request text for the commits of ``cwd``'s ``HEAD`` beyond ``base`` (default:
        the repository's default branch); ``InvalidParams`` when there are none."""
        git = self._runner()
        base = base or await asyncio.to_thread(default_branch, cwd)
        if not base:
            raise InvalidParams(f"{cwd} has no default branch to compare with; give a base")
        if base.startswith("-"):
            raise InvalidParams(f"invalid base {base!r}")
        commits = await git.run(["log", "--oneline", "--no-color", f"{base}..HEAD"], cwd=cwd)
        if not commits.stdout.strip():
            raise InvalidParams(f"HEAD of {cwd} has no commits beyond {base}")
        diff = await git.run(["diff", "--no-color", "--no-ext-diff", f"{base}...HEAD"], cwd=cwd)
        return await self.change_request(diff.stdout, commits.stdout, cwd)

    # ------------------------------------------------------------------ titles

    def request_title(self, agent_id: str, cwd: str, first_prompt: str) -> None:
        """Title the untitled agent ``agent_id`` from its first prompt, in the background."""
        self._spawn(self._title_agent(agent_id, cwd, first_prompt))

    async def _title_agent(self, agent_id: str, cwd: str, first_prompt: str) -> None:
        title = await self.title(first_prompt, cwd, served=agent_id)
        if title is not None:
            await self._agents.set_title(agent_id, title)

    def _spawn(self, work: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await work
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("metadata generation failed")

        task = asyncio.get_running_loop().create_task(guarded(), name="metadata")
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _loop_time(deadline: float) -> float:
    """``deadline`` (a :func:`time.monotonic` value) on the running loop's clock."""
    loop = asyncio.get_running_loop()
    return loop.time() + (deadline - time.monotonic())
