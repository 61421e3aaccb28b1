"""The loop rules: one task per running loop, each iteration a fresh worker agent (and, with
``verifyPrompt``, a verifier agent), driven through the agent port alone.

Durability: every change to a loop is written to its record in the store (the plugin records
of :mod:`paseo_loops.store`) before the loop goes on, so a
daemon that dies mid-loop finds, at its next start, the loop ``running`` with its interrupted
iteration ``running``. That iteration is started again, once: it is marked
``rerunAfterRestart``, and an iteration found interrupted with that mark already set fails
("interrupted twice by a daemon restart") so a crash that recurs cannot repeat it forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paseo_hookspecs.agents import AgentCreate, Agents
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound, PaseoError
from paseo_hookspecs.plugin_records import PluginRecordRepository

from paseo_loops.checks import run_check
from paseo_loops.records import (
    FINISHED,
    Loop,
    add_log,
    new_iteration,
    new_loop,
    now,
    parse_time,
    summary,
)
from paseo_loops.store import all_loops, migrate_legacy_file

log = logging.getLogger("paseo.loops")

DEFAULT_PROVIDER = "claude"
WAIT_SLICE = 30.0
"""Seconds one agent wait lasts before the loop looks at its limits again."""
PERMISSION_POLL = 1.0
"""Seconds between looks at an agent that waits for a person's permission answer."""
MAX_REASON = 2000
LABEL_LOOP = "paseo.loop-id"
LABEL_ITERATION = "paseo.loop-iteration"
LABEL_ROLE = "paseo.loop-role"


@dataclass(frozen=True)
class LoopOrigin:
    """The agent that started a loop through the MCP tools, and what the loop's agents get
    from it (:mod:`paseo_loops.tools` decides them)."""

    agent_id: str | None
    """``None``: a schedule started it (its labels say which)."""
    worker_mode: str | None = None
    verifier_mode: str | None = None
    labels: dict[str, str] = field(default_factory=dict)

    def fields(self) -> dict[str, Any]:
        return {
            "started_by": self.agent_id,
            "worker_mode": self.worker_mode,
            "verifier_mode": self.verifier_mode,
            "agent_labels": self.labels,
        }


class LoopLimit(Exception):
    """The loop's ``maxTimeMs`` ran out."""


class LoopService:
    def __init__(
        self, records: PluginRecordRepository, agents: Agents, *, legacy_home: Path | None = None
    ) -> None:
        """``records``: where the loops are kept; ``legacy_home``: a ``$PASEO_HOME`` whose
        ``loops/loops.json`` (the earlier layout) :meth:`start` moves into ``records``."""
        self._records = records
        self._legacy_home = legacy_home
        self._agents = agents
        self._loops: dict[str, Loop] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._closing = False

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Load the records and resume every loop still ``running``."""
        if self._legacy_home is not None:
            await migrate_legacy_file(self._legacy_home, self._records)
        for loop in await all_loops(self._records):
            self._loops[loop["id"]] = loop
        for loop in list(self._loops.values()):
            if loop.get("status") == "running" and not self._closing:
                add_log(loop, "Daemon restarted; resuming the loop.")
                await self._save(loop)
                self._spawn(loop)

    def cancel(self) -> list[asyncio.Task[None]]:
        """Cancel the loop tasks at once (the records stay ``running``, to resume at the next
        start). Synchronous, so the cancellation is delivered before the kernel, after
        ``paseo_shutdown``, stops the agents: a worker closed by a shutdown must not count as
        the iteration's outcome."""
        self._closing = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        return tasks

    async def close(self) -> None:
        """:meth:`cancel`, then wait for the tasks to have saved their records."""
        tasks = self.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # -- requests --------------------------------------------------------------------------

    async def run(self, params: Any, *, origin: LoopOrigin | None = None) -> Loop:
        """Start a loop; ``origin`` says which agent started it (through the MCP tools) and
        what its agents inherit from that agent."""
        checks = [c for c in (params.verifyChecks or []) if c.strip()]
        verify = (params.verifyPrompt or "").strip() or None
        if not checks and not verify:
            raise InvalidParams("Loop requires --verify or at least one --verify-check")
        cwd = Path(params.cwd)
        if not cwd.is_absolute():
            raise InvalidParams(f"the loop's cwd must be an absolute path: {params.cwd}")
        if not await asyncio.to_thread(cwd.is_dir):
            raise InvalidParams(f"the loop's cwd is not a directory: {params.cwd}")
        named = self._find_by_name(params.name) if params.name else None
        if named is not None and named["status"] == "running":
            raise Conflict(f"a running loop is already named {params.name!r}: {named['id']}")
        provider, model = params.provider, params.model
        if provider and "/" in provider and not model:
            provider, model = provider.split("/", 1)
        loop = new_loop(
            prompt=params.prompt,
            cwd=str(cwd),
            name=params.name,
            provider=provider or DEFAULT_PROVIDER,
            model=model,
            verifier_provider=params.verifierProvider,
            verifier_model=params.verifierModel,
            verify_prompt=verify,
            verify_checks=checks,
            archive=bool(params.archive),
            sleep_ms=params.sleepMs,
            max_iterations=params.maxIterations,
            max_time_ms=params.maxTimeMs,
            **(origin.fields() if origin is not None else {}),
        )
        add_log(loop, f"Loop created in {loop['cwd']}")
        self._loops[loop["id"]] = loop
        await self._save(loop)
        self._spawn(loop)
        return loop

    def list(self) -> list[dict[str, Any]]:
        ordered = sorted(self._loops.values(), key=lambda loop: loop["createdAt"], reverse=True)
        return [summary(loop) for loop in ordered]

    def get(self, ref: str) -> Loop:
        loop = self._loops.get(ref) or self._find_by_name(ref)
        if loop is None:
            matches = [lp for lp in self._loops.values() if lp["id"].startswith(ref.lower())]
            if len(matches) == 1:
                loop = matches[0]
        if loop is None:
            raise NotFound(f"Loop not found: {ref}")
        return loop

    async def stop(self, ref: str) -> Loop:
        loop = self.get(ref)
        if loop["status"] in FINISHED:
            return loop
        loop["stopRequestedAt"] = now()
        add_log(loop, "Stop requested.")
        await self._save(loop)
        task = self._tasks.get(loop["id"])
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if loop["status"] == "running":  # no task ran it (or it ended before finishing)
            await self._finish_stopped(loop)
        return loop

    async def wait(self, ref: str) -> Loop:
        """Until the loop has ended (stopped, succeeded, failed) or its task is gone (a
        shutdown); cancelling the waiter leaves the loop running."""
        loop = self.get(ref)
        task = self._tasks.get(loop["id"])
        if task is not None:
            await asyncio.wait({task})
        return loop

    # -- the loop --------------------------------------------------------------------------

    def _find_by_name(self, name: str) -> Loop | None:
        """The newest loop of that name (a name is reused once its loop has finished)."""
        named = [loop for loop in self._loops.values() if loop.get("name") == name]
        return max(named, key=lambda loop: str(loop["createdAt"])) if named else None

    async def _save(self, loop: Loop) -> None:
        """Write ``loop``'s record (encoded now: the loop may change while the write runs)."""
        await self._records.put(loop["id"], loop)

    def _spawn(self, loop: Loop) -> None:
        task = asyncio.get_running_loop().create_task(
            self._guarded(loop), name=f"loop-{loop['id']}"
        )
        key: str = loop["id"]
        self._tasks[key] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._tasks.get(key) is done:
                del self._tasks[key]

        task.add_done_callback(forget)

    async def _guarded(self, loop: Loop) -> None:
        try:
            await self._drive(loop)
        except asyncio.CancelledError:
            if loop.get("stopRequestedAt"):
                await asyncio.shield(self._finish_stopped(loop))
            raise
        except Exception as exc:  # a bug or a store failure: the loop ends, the daemon goes on
            if self._closing:  # the store may be closing: the record stays as last written
                log.warning("loop %s: %s during shutdown; it resumes next start", loop["id"], exc)
                return
            log.exception("loop %s failed unexpectedly", loop["id"])
            try:
                await self._finish(loop, "failed", f"Loop failed: {exc}", level="error")
            except Exception:
                log.exception("loop %s: its failure could not be recorded", loop["id"])

    async def _drive(self, loop: Loop) -> None:
        iterations: list[dict[str, Any]] = loop["iterations"]
        feedback: str | None = _last_feedback(iterations)
        while True:
            if self._out_of_time(loop):
                await self._finish(loop, "failed", f"Reached max time ({loop['maxTimeMs']} ms).")
                return
            interrupted = (
                iterations[-1] if iterations and iterations[-1]["status"] == "running" else None
            )
            if interrupted is not None and interrupted.get("rerunAfterRestart"):
                await self._end_iteration(
                    loop, interrupted, "failed", "interrupted twice by a daemon restart"
                )
                feedback = interrupted["failureReason"]
                interrupted = None
            if interrupted is not None:
                iteration = interrupted
                await self._abandon_agents(iteration)
                rerun = new_iteration(iteration["index"])
                rerun["rerunAfterRestart"] = True
                iteration.clear()
                iteration.update(rerun)
                add_log(
                    loop,
                    f"Daemon restarted during iteration {iteration['index']}; running it again.",
                    iteration=iteration["index"],
                )
            else:
                maximum = loop.get("maxIterations")
                if maximum is not None and len(iterations) >= maximum:
                    await self._finish(loop, "failed", f"Reached max iterations ({maximum}).")
                    return
                iteration = new_iteration(len(iterations) + 1)
                iterations.append(iteration)
                add_log(
                    loop, f"Starting iteration {iteration['index']}.", iteration=iteration["index"]
                )
            loop["activeIteration"] = iteration["index"]
            await self._save(loop)
            try:
                passed = await self._iterate(loop, iteration, feedback)
            except LoopLimit:
                await self._end_iteration(loop, iteration, "failed", "Reached max time")
                await self._finish(loop, "failed", f"Reached max time ({loop['maxTimeMs']} ms).")
                return
            except asyncio.CancelledError:
                if iteration["status"] == "running" and loop.get("stopRequestedAt"):
                    await asyncio.shield(self._abandon_agents(iteration))
                    await self._end_iteration(loop, iteration, "stopped", "Loop stopped")
                raise
            finally:
                await asyncio.shield(self._after_iteration(loop, iteration))
            if passed:
                await self._finish(
                    loop, "succeeded", f"Iteration {iteration['index']} passed; loop succeeded."
                )
                return
            feedback = iteration["failureReason"]
            await self._sleep(loop)

    async def _iterate(self, loop: Loop, iteration: dict[str, Any], feedback: str | None) -> bool:
        index = iteration["index"]
        worker = await self._agents.create(
            AgentCreate(
                provider=loop["provider"],
                model=loop["model"],
                modeId=loop.get("workerModeId"),
                cwd=loop["cwd"],
                title=f"{loop['name']} #{index} worker",
                labels=_labels(loop, index, "worker"),
                initialPrompt=worker_prompt(loop["prompt"], feedback, index),
                messageId=f"loop-{loop['id']}-{index}-worker-{iteration['workerStartedAt']}",
            )
        )
        iteration["workerAgentId"] = worker.id
        loop["activeWorkerAgentId"] = worker.id
        add_log(loop, f"Worker agent {worker.id} started.", iteration=index, source="worker")
        await self._save(loop)
        outcome, reply = await self._await_agent(loop, worker.id)
        iteration["workerOutcome"] = outcome
        iteration["workerCompletedAt"] = now()
        loop["activeWorkerAgentId"] = None
        add_log(loop, f"Worker {outcome}.", iteration=index, source="worker")
        await self._save(loop)
        if outcome != "completed":
            await self._end_iteration(loop, iteration, "failed", f"Worker {outcome}")
            return False
        for command in loop["verifyChecks"]:
            result = await run_check(command, loop["cwd"])
            iteration["verifyChecks"].append(result)
            verdict = "passed" if result["passed"] else f"failed (exit {result['exitCode']})"
            add_log(loop, f"Check {command!r} {verdict}.", iteration=index, source="verify-check")
            await self._save(loop)
        failed = [r["command"] for r in iteration["verifyChecks"] if not r["passed"]]
        if failed:
            await self._end_iteration(
                loop, iteration, "failed", f"Verify check failed: {failed[0]}"
            )
            return False
        if loop.get("verifyPrompt"):
            passed, reason = await self._verify(loop, iteration, reply)
            if not passed:
                await self._end_iteration(loop, iteration, "failed", f"Verifier rejected: {reason}")
                return False
        await self._end_iteration(loop, iteration, "succeeded", None)
        return True

    async def _verify(
        self, loop: Loop, iteration: dict[str, Any], reply: str | None
    ) -> tuple[bool, str]:
        index = iteration["index"]
        started = now()
        verifier = await self._agents.create(
            AgentCreate(
                provider=loop.get("verifierProvider") or loop["provider"],
                model=loop.get("verifierModel")
                or (None if loop.get("verifierProvider") else loop["model"]),
                modeId=loop.get("verifierModeId"),
                cwd=loop["cwd"],
                title=f"{loop['name']} #{index} verifier",
                labels=_labels(loop, index, "verifier"),
                initialPrompt=verifier_prompt(loop["verifyPrompt"], loop["prompt"], reply),
                messageId=f"loop-{loop['id']}-{index}-verifier-{started}",
            )
        )
        iteration["verifierAgentId"] = verifier.id
        loop["activeVerifierAgentId"] = verifier.id
        add_log(loop, f"Verifier agent {verifier.id} started.", iteration=index, source="verifier")
        await self._save(loop)
        outcome, answer = await self._await_agent(loop, verifier.id)
        loop["activeVerifierAgentId"] = None
        if outcome != "completed":
            passed, reason = False, f"the verifier {outcome}"
        else:
            passed, reason = parse_verdict(answer)
        iteration["verifyPrompt"] = {
            "prompt": loop["verifyPrompt"],
            "verifierAgentId": verifier.id,
            "passed": passed,
            "reason": reason,
            "startedAt": started,
            "completedAt": now(),
        }
        add_log(
            loop,
            f"Verifier {'approved' if passed else 'rejected'}: {reason}",
            iteration=index,
            source="verifier",
        )
        await self._save(loop)
        return passed, reason

    async def _await_agent(self, loop: Loop, agent_id: str) -> tuple[str, str | None]:
        """Until the agent's turn ends: ``completed``, ``failed`` or ``closed``, and its reply.
        A permission request waits for a person's answer (workers run in the provider's
        default, asking, mode, as in the TypeScript daemon)."""
        asked = False
        while True:
            remaining = self._remaining(loop)
            if remaining is not None and remaining <= 0:
                with contextlib.suppress(PaseoError):
                    await self._agents.stop(agent_id)
                raise LoopLimit
            slice_ = WAIT_SLICE if remaining is None else min(WAIT_SLICE, remaining)
            waited = await self._agents.wait(agent_id, timeout=slice_)
            if waited.outcome == "idle":
                return "completed", waited.last_reply
            if waited.outcome == "error":
                return "failed", waited.last_reply
            if waited.outcome == "closed":
                return "closed", waited.last_reply
            if waited.outcome == "permission":
                if not asked:
                    asked = True
                    add_log(loop, f"Agent {agent_id} waits for a permission answer.", source="loop")
                    await self._save(loop)
                await asyncio.sleep(PERMISSION_POLL)

    async def _after_iteration(self, loop: Loop, iteration: dict[str, Any]) -> None:
        loop["activeWorkerAgentId"] = None
        loop["activeVerifierAgentId"] = None
        if iteration["status"] != "running":
            loop["activeIteration"] = None
        if loop.get("archive") and iteration["status"] != "running":
            for key in ("workerAgentId", "verifierAgentId"):
                agent_id = iteration.get(key)
                if agent_id:
                    with contextlib.suppress(PaseoError):
                        await self._agents.archive(agent_id, force=True)
        await self._save(loop)

    async def _abandon_agents(self, iteration: dict[str, Any]) -> None:
        """Stop the agents of an iteration a restart interrupted: the rerun has its own."""
        for key in ("workerAgentId", "verifierAgentId"):
            agent_id = iteration.get(key)
            if agent_id:
                with contextlib.suppress(PaseoError):
                    await self._agents.stop(agent_id)

    async def _sleep(self, loop: Loop) -> None:
        seconds = max(0, int(loop.get("sleepMs") or 0)) / 1000
        if seconds:
            remaining = self._remaining(loop)
            await asyncio.sleep(seconds if remaining is None else max(0.0, min(seconds, remaining)))

    def _remaining(self, loop: Loop) -> float | None:
        limit = loop.get("maxTimeMs")
        if limit is None:
            return None
        elapsed = time.time() - parse_time(loop["startedAt"]).timestamp()
        return float(limit) / 1000 - elapsed

    def _out_of_time(self, loop: Loop) -> bool:
        remaining = self._remaining(loop)
        return remaining is not None and remaining <= 0

    async def _end_iteration(
        self, loop: Loop, iteration: dict[str, Any], status: str, reason: str | None
    ) -> None:
        iteration["status"] = status
        iteration["failureReason"] = reason[:MAX_REASON] if reason else None
        text = f"Iteration {iteration['index']} {status}" + (f": {reason}" if reason else ".")
        add_log(
            loop,
            text,
            iteration=iteration["index"],
            level="info" if status == "succeeded" else "error",
        )
        await self._save(loop)

    async def _finish(self, loop: Loop, status: str, text: str, *, level: str = "info") -> None:
        loop["status"] = status
        loop["completedAt"] = now()
        loop["activeIteration"] = None
        loop["activeWorkerAgentId"] = None
        loop["activeVerifierAgentId"] = None
        add_log(loop, text, level=level)
        await self._save(loop)

    async def _finish_stopped(self, loop: Loop) -> None:
        iterations = loop["iterations"]
        if iterations and iterations[-1]["status"] == "running":
            iteration = iterations[-1]
            await self._abandon_agents(iteration)
            await self._end_iteration(loop, iteration, "stopped", "Loop stopped")
            await self._after_iteration(loop, iteration)
        await self._finish(loop, "stopped", "Loop stopped.")


def _labels(loop: Loop, index: int, role: str) -> dict[str, str]:
    inherited = loop.get("agentLabels")
    own = {LABEL_LOOP: loop["id"], LABEL_ITERATION: str(index), LABEL_ROLE: role}
    return {**(inherited if isinstance(inherited, dict) else {}), **own}


def _last_feedback(iterations: list[dict[str, Any]]) -> str | None:
    for iteration in reversed(iterations):
        if iteration["status"] == "failed" and iteration.get("failureReason"):
            return str(iteration["failureReason"])
    return None


def worker_prompt(prompt: str, feedback: str | None, index: int) -> str:
    """The task, plus why the previous iteration did not pass (a fresh worker knows nothing of
    it otherwise)."""
    if feedback is None or index == 1:
        return prompt
    return f"{prompt}\n\nThe previous attempt (iteration {index - 1}) did not pass: {feedback}"


def verifier_prompt(verify: str, task: str, reply: str | None) -> str:
    return (
        f"{verify}\n\n"
        "You are verifying another agent's work on this task:\n"
        f"<task>\n{task}\n</task>\n"
        f"Its final reply was:\n<reply>\n{reply or ''}\n</reply>\n"
        "Inspect the work in this directory. Answer with one JSON object and nothing else: "
        '{"passed": true} if it is done, or {"passed": false, "reason": "what is missing"}.'
    )


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(answer: str | None) -> tuple[bool, str]:
    """The verifier's ``{"passed": …, "reason": …}``; anything else is a rejection that says
    so (a verifier that cannot answer must not pass a loop)."""
    text = (answer or "").strip()
    match = _JSON_OBJECT.search(text)
    if match is not None:
        with contextlib.suppress(ValueError):
            verdict = json.loads(match.group(0))
            if isinstance(verdict, dict) and isinstance(verdict.get("passed"), bool):
                reason = str(
                    verdict.get("reason") or ("approved" if verdict["passed"] else "rejected")
                )
                return verdict["passed"], reason[:MAX_REASON]
    return False, f"the verifier gave no verdict: {text[:500] or '(no reply)'}"
