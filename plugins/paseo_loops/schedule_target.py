"""The ``loop`` schedule target (``paseo_register_schedule_targets``): each fire of the
schedule starts a loop whose worker's task is the schedule's prompt, and the run lasts until
that loop has ended (so a slot that comes while it still runs is skipped, as for an agent's
turn). The run succeeds when the loop succeeded; its output names the loop.

The target's ``config`` takes the ``loop/run`` fields but the prompt: ``cwd`` (required),
``name``, ``provider``, ``model``, ``verifierProvider``, ``verifierModel``, ``verifyPrompt``,
``verifyChecks``, ``archive``, ``sleepMs``, ``maxIterations``, ``maxTimeMs``. The loop's agents
carry the schedule's labels (``paseo.schedule-id``, ``paseo.schedule-run``). A run cut short
(its timeout) stops its loop: a loop a schedule started does not outlive its run, except
across a daemon restart, which resumes the loop (and fails the run, as for every target).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.schedules import ScheduleFire, ScheduleFired, ScheduleTargetKind
from pydantic import ConfigDict, Field, ValidationError

from paseo_loops.rpc import RunParams
from paseo_loops.service import LoopOrigin

if TYPE_CHECKING:
    from paseo_loops.rpc import Runtime

TYPE = "loop"


class LoopTargetConfig(RunParams):
    """``loop/run`` without the prompt (the schedule's prompt is the worker's task)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    prompt: str = Field(default="-", exclude=True)


def _validated(config: Mapping[str, Any]) -> LoopTargetConfig:
    try:
        parsed = LoopTargetConfig.model_validate(dict(config))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)
        )
        raise InvalidParams(f"invalid loop target: {problems}") from None
    if (
        not [c for c in parsed.verifyChecks if c.strip()]
        and not (parsed.verifyPrompt or "").strip()
    ):
        raise InvalidParams("Loop requires --verify or at least one --verify-check")
    if not os.path.isabs(parsed.cwd) or not os.path.isdir(parsed.cwd):
        raise InvalidParams(f"the loop's cwd must be an absolute directory: {parsed.cwd}")
    return parsed


def kind(runtime: Runtime) -> ScheduleTargetKind:
    async def validate(config: Mapping[str, Any]) -> dict[str, Any]:
        parsed = await asyncio.to_thread(_validated, config)
        stored: dict[str, Any] = parsed.model_dump(exclude_none=True, exclude={"prompt"})
        return stored

    async def run(fire: ScheduleFire) -> ScheduleFired:
        service = await runtime.ready()
        params = RunParams.model_validate({**fire.config, "prompt": fire.prompt})
        origin = LoopOrigin(agent_id=None, labels=dict(fire.labels))
        loop = await service.run(params, origin=origin)
        try:
            ended = await service.wait(loop["id"])
        except asyncio.CancelledError:
            current = runtime.service
            if current is not None:  # the run timed out (not a shutdown): its loop ends too
                await asyncio.shield(current.stop(loop["id"]))
            raise
        last = ended["logs"][-1]["text"] if ended.get("logs") else ""
        output = f"loop {ended['id']} {ended['status']}: {last}"
        if ended["status"] == "succeeded":
            return ScheduleFired("succeeded", output=output)
        return ScheduleFired("failed", output=output, error=f"loop {ended['id']} {ended['status']}")

    return ScheduleTargetKind(TYPE, "start a loop (docs/loops.md)", validate, run)


__all__ = ["TYPE", "LoopTargetConfig", "kind"]
