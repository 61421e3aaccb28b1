"""The loop tools agents are offered through the MCP server (``paseo_register_mcp_tools``).

``loop_run`` takes the TypeScript wire's ``loop/run`` fields; ``loop_list``, ``loop_inspect``,
``loop_logs`` and ``loop_stop`` answer as the ``loop.*`` methods do. A loop started here never
has more autonomy than the agent that started it:

- it works in the caller's directory or below it (no other repository);
- its worker and verifier start in the caller's own mode, mapped to their providers by access
  level (never above it; a provider with no mode at or below the caller's level is refused),
  and carry the caller's child labels (the caller reaches them with the agent tools);
- ``verifyChecks`` are shell commands the daemon runs without asking anyone, so only a caller
  whose own mode never asks (access level ``full``) may give them; others verify with
  ``verifyPrompt`` (a verifier agent, which asks as the caller would);
- it is bounded: ``maxIterations`` or ``maxTimeMs`` is required;
- a loop's own worker or verifier may not start loops (no loop breeds loops).

An agent reaches the loops it started and those of the agents it reaches; a person's loops
only with ``callerScope: all``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import AccessDenied, InvalidParams
from paseo_hookspecs.mcp_tools import McpTool, McpToolScope
from pydantic import BaseModel, ConfigDict, Field

from paseo_loops.records import Loop, summary
from paseo_loops.rpc import LoopRef, RunParams
from paseo_loops.service import LABEL_LOOP, LoopOrigin

if TYPE_CHECKING:
    from paseo_loops.rpc import Runtime

MAX_AGENT_ITERATIONS = 100
"""Most iterations a loop an agent starts may run."""


class LoopRunInput(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    prompt: str = Field(min_length=1, max_length=200_000, description="the worker's task")
    cwd: str | None = Field(
        default=None, max_length=4096, description="your directory (default) or one below it"
    )
    name: str | None = Field(default=None, max_length=200)
    provider: str | None = Field(default=None, max_length=200, description="the worker's")
    model: str | None = Field(default=None, max_length=200)
    verifierProvider: str | None = Field(default=None, max_length=200)
    verifierModel: str | None = Field(default=None, max_length=200)
    verifyPrompt: str | None = Field(
        default=None,
        max_length=200_000,
        description="a verifier agent approves or rejects each iteration's work",
    )
    verifyChecks: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="shell commands that must all exit 0 (only for a caller in a mode that "
        "never asks)",
    )
    archive: bool = False
    sleepMs: int = Field(default=0, ge=0, le=24 * 3600 * 1000)
    maxIterations: int | None = Field(default=None, ge=1, le=MAX_AGENT_ITERATIONS)
    maxTimeMs: int | None = Field(default=None, ge=1, le=7 * 24 * 3600 * 1000)


class LoopLogsInput(LoopRef):
    afterSeq: int = Field(default=0, ge=0, description="only entries after this seq")


class NoInput(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


def _within(given: str, own: str) -> bool:
    path, root = os.path.realpath(given), os.path.realpath(own)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


async def _origin(scope: McpToolScope, args: LoopRunInput) -> LoopOrigin:
    caller = scope.caller
    if caller.labels.get(LABEL_LOOP):
        raise AccessDenied(
            f"you are an agent of loop {caller.labels[LABEL_LOOP]}: a loop's agents may not "
            "start loops"
        )
    if args.verifyChecks and await scope.access() != "full":
        raise AccessDenied(
            "verifyChecks are shell commands the daemon runs without asking, and your mode "
            "asks before commands: verify with verifyPrompt (a verifier agent) instead"
        )
    if args.maxIterations is None and args.maxTimeMs is None:
        raise InvalidParams("a loop you start needs maxIterations or maxTimeMs (a bound)")
    level = await scope.access()
    modes: list[str | None] = []
    for provider in (args.provider or "", args.verifierProvider or args.provider or ""):
        mode = await scope.child_mode(provider.split("/", 1)[0])
        if mode is None and level is not None:
            # The provider's default could be above the caller's own level.
            raise AccessDenied(
                f"{provider or 'the default provider'} has no mode at or below your own "
                f"access level ({level}): a loop you start may not run with more autonomy"
            )
        modes.append(mode)
    return LoopOrigin(
        agent_id=caller.agent_id,
        worker_mode=modes[0],
        verifier_mode=modes[1],
        labels=dict(scope.child_labels()),
    )


def tools(runtime: Runtime) -> list[McpTool]:
    async def reached(scope: McpToolScope, reference: str) -> Loop:
        loop = (await runtime.ready()).get(reference)
        if not await scope.reaches(loop.get("startedByAgentId")):
            raise AccessDenied(
                f"loop {loop['id']} was not started by you ({scope.caller.agent_id}) or an "
                "agent you reach"
            )
        return loop

    async def loop_run(scope: McpToolScope, args: LoopRunInput) -> dict[str, Any]:
        caller = scope.caller
        cwd = args.cwd or caller.cwd
        if not _within(cwd, caller.cwd):
            raise AccessDenied(
                f"a loop you start works in your directory ({caller.cwd}) or below it, not {cwd!r}"
            )
        origin = await _origin(scope, args)
        params = RunParams.model_validate({**args.model_dump(), "cwd": cwd})
        return {"loop": await (await runtime.ready()).run(params, origin=origin)}

    async def loop_list(scope: McpToolScope, args: NoInput) -> dict[str, Any]:
        service = await runtime.ready()
        shown = []
        for item in service.list():
            loop = service.get(item["id"])
            if await scope.reaches(loop.get("startedByAgentId")):
                shown.append(summary(loop))
        return {"loops": shown}

    async def loop_inspect(scope: McpToolScope, args: LoopRef) -> dict[str, Any]:
        return {"loop": await reached(scope, args.id)}

    async def loop_logs(scope: McpToolScope, args: LoopLogsInput) -> dict[str, Any]:
        loop = await reached(scope, args.id)
        entries = [entry for entry in loop["logs"] if entry["seq"] > args.afterSeq]
        return {"loopId": loop["id"], "entries": entries, "nextSeq": loop["nextLogSeq"]}

    async def loop_stop(scope: McpToolScope, args: LoopRef) -> dict[str, Any]:
        loop = await reached(scope, args.id)
        return {"loop": await (await runtime.ready()).stop(loop["id"])}

    return [
        McpTool(
            "loop_run",
            "Start a loop: a fresh worker agent repeats the task in your directory until "
            "verifyPrompt's verifier approves (or verifyChecks pass), within maxIterations or "
            "maxTimeMs; its agents run in your mode at most.",
            LoopRunInput,
            loop_run,
        ),
        McpTool(
            "loop_list",
            "The loops you started (and those of agents you reach).",
            NoInput,
            loop_list,
        ),
        McpTool(
            "loop_inspect", "One loop with its iterations and check results.", LoopRef, loop_inspect
        ),
        McpTool("loop_logs", "A loop's log entries after a seq.", LoopLogsInput, loop_logs),
        McpTool("loop_stop", "Stop a loop you started.", LoopRef, loop_stop),
    ]
