"""The loop tools' descriptors and least-privilege rules, over a real loop service (records in
a temporary home) whose agent port records what a worker would be created with."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import pytest
from paseo_hookspecs.agents import AgentCreate
from paseo_hookspecs.errors import AccessDenied, InvalidParams, NotFound
from paseo_hookspecs.interfaces.agent import ModeAccess
from paseo_hookspecs.mcp_tools import McpTool, McpToolCaller
from paseo_loops.rpc import RunParams, Runtime
from paseo_loops.service import LABEL_LOOP, LoopService
from paseo_loops.tools import tools
from paseo_store_json._plugin_records import JsonPluginRecordStore
from pydantic import ValidationError

ME = "aaaaaaaa-0000-4000-8000-000000000001"
OTHER = "bbbbbbbb-0000-4000-8000-000000000002"


class Scope:
    """A caller in ``cwd`` at access level ``level``, reaching only itself."""

    def __init__(
        self,
        cwd: Path,
        level: ModeAccess | None = "read-only",
        agent_id: str = ME,
        labels: Mapping[str, str] | None = None,
        mapped: bool = True,
    ) -> None:
        self.caller = McpToolCaller(
            agent_id=agent_id, provider="p", cwd=str(cwd), workspace_id=None, labels=labels or {}
        )
        self.level = level
        self.mapped = mapped

    async def reaches(self, agent_id: str | None) -> bool:
        return agent_id == self.caller.agent_id

    async def child_mode(self, provider: str) -> str | None:
        return f"{provider or 'default'}:plan" if self.mapped else None

    async def access(self) -> ModeAccess | None:
        return self.level

    def child_labels(self) -> Mapping[str, str]:
        return {"paseo.parent-agent-id": self.caller.agent_id}


class Agents:
    """Records each agent a loop creates; the creation never finishes (the test ends first)."""

    def __init__(self) -> None:
        self.created: list[AgentCreate] = []
        self.seen = asyncio.Event()

    async def create(self, spec: AgentCreate) -> Any:
        self.created.append(spec)
        self.seen.set()
        await asyncio.Event().wait()


def _service(home: Path, agents: Any) -> LoopService:
    """A loop service keeping its records as the json store driver does, in ``home``."""
    return LoopService(JsonPluginRecordStore(home).collection("loops", "loops"), agents)


def _tools(service: LoopService) -> dict[str, McpTool]:
    runtime = Runtime()
    runtime.service = service
    return {tool.name: tool for tool in tools(runtime)}


async def _call(tool: McpTool, scope: Scope, arguments: dict[str, Any]) -> Any:
    return await tool.handler(scope, tool.input.model_validate(arguments))


BOUNDED = {"prompt": "do it", "verifyPrompt": "is it done?", "maxIterations": 2}


def test_the_tools_take_the_wire_fields() -> None:
    named = {tool.name: tool for tool in tools(Runtime())}
    assert set(named) == {"loop_run", "loop_list", "loop_inspect", "loop_logs", "loop_stop"}
    fields = set(named["loop_run"].input.model_json_schema()["properties"])
    assert fields <= set(RunParams.model_fields)


def test_every_refusal_of_loop_run(tmp_path: Path) -> None:
    async def scenario() -> None:
        service = _service(tmp_path / "home", cast(Any, Agents()))
        run = _tools(service)["loop_run"]
        work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
        work.mkdir()
        elsewhere.mkdir()
        scope = Scope(work)
        with pytest.raises(AccessDenied, match="your directory"):
            await _call(run, scope, {**BOUNDED, "cwd": str(elsewhere)})
        with pytest.raises(AccessDenied, match="your directory"):
            await _call(run, scope, {**BOUNDED, "cwd": str(work / ".." / "elsewhere")})
        with pytest.raises(AccessDenied, match="verifyChecks"):
            await _call(run, scope, {**BOUNDED, "verifyChecks": ["true"]})
        with pytest.raises(AccessDenied, match="verifyChecks"):
            await _call(run, Scope(work, level=None), {**BOUNDED, "verifyChecks": ["true"]})
        with pytest.raises(InvalidParams, match="maxIterations or maxTimeMs"):
            await _call(run, scope, {"prompt": "x", "verifyPrompt": "v"})
        with pytest.raises(AccessDenied, match="no mode at or below"):
            await _call(run, Scope(work, mapped=False), BOUNDED)
        worker = Scope(work, labels={LABEL_LOOP: "1234abcd"})
        with pytest.raises(AccessDenied, match="may not start loops"):
            await _call(run, worker, BOUNDED)
        with pytest.raises(ValidationError):
            await _call(run, scope, {**BOUNDED, "maxIterations": 1000})
        assert service.list() == []

    asyncio.run(scenario())


def test_a_loop_an_agent_starts_inherits_its_mode_and_is_its_own(tmp_path: Path) -> None:
    async def scenario() -> None:
        agents = Agents()
        service = _service(tmp_path / "home", cast(Any, agents))
        named = _tools(service)
        work = tmp_path / "work"
        (work / "sub").mkdir(parents=True)
        scope = Scope(work, level="full")
        try:
            started = await _call(
                named["loop_run"],
                scope,
                {**BOUNDED, "cwd": str(work / "sub"), "verifyChecks": ["true"], "provider": "x"},
            )
            loop = started["loop"]
            assert loop["startedByAgentId"] == ME
            assert (loop["workerModeId"], loop["verifierModeId"]) == ("x:plan", "x:plan")
            await asyncio.wait_for(agents.seen.wait(), 30)
            spec = agents.created[0]
            assert spec.modeId == "x:plan"
            assert spec.labels["paseo.parent-agent-id"] == ME
            assert spec.labels[LABEL_LOOP] == loop["id"]
            assert spec.cwd == str(work / "sub")
            # A person's loop, and another agent's, are out of reach.
            theirs = await service.run(
                RunParams(prompt="p", cwd=str(work), verifyChecks=["true"], maxIterations=1)
            )
            listed = await _call(named["loop_list"], scope, {})
            assert [item["id"] for item in listed["loops"]] == [loop["id"]]
            for tool in ("loop_inspect", "loop_logs", "loop_stop"):
                with pytest.raises(AccessDenied):
                    await _call(named[tool], scope, {"id": theirs["id"]})
                with pytest.raises(AccessDenied):
                    await _call(named[tool], Scope(work, agent_id=OTHER), {"id": loop["id"]})
            with pytest.raises(NotFound):
                await _call(named["loop_inspect"], scope, {"id": "nope"})
            logs = await _call(named["loop_logs"], scope, {"id": loop["id"]})
            assert logs["entries"][0]["text"].startswith("Loop created")
            stopped = await _call(named["loop_stop"], scope, {"id": loop["id"]})
            assert stopped["loop"]["status"] == "stopped"
        finally:
            await service.close()

    asyncio.run(scenario())
