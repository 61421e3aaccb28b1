"""The contract's ProgramProvider: overrides kept, models merged, discovery cached, derive typed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.agent import (
    AgentSession,
    Availability,
    EventSink,
    ModelInfo,
    PersistenceHandle,
    SessionConfig,
)
from paseo_hookspecs.process import ProcessLauncher
from paseo_hookspecs.program_provider import ProgramProvider


class Counting(ProgramProvider):
    id = "counting"
    label = "Counting"
    default_command = ("counting-program", "--serve")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.discoveries = 0

    async def discover_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        self.discoveries += 1
        await asyncio.sleep(0)  # lets a concurrent listing reach the lock
        return [ModelInfo(id="found", label="Found", default=True)]

    async def availability(self) -> Availability:
        return Availability(status="ready")

    async def create_session(
        self, config: SessionConfig, sink: EventSink, launcher: ProcessLauncher
    ) -> AgentSession:
        raise NotImplementedError

    async def resume_session(
        self,
        handle: PersistenceHandle,
        config: SessionConfig,
        sink: EventSink,
        launcher: ProcessLauncher,
    ) -> AgentSession:
        raise NotImplementedError


LAUNCHER: Any = None  # discovery here asks no program


def test_defaults_come_from_the_class() -> None:
    provider = Counting()
    assert (provider.id, provider.label) == ("counting", "Counting")
    assert provider._command == ["counting-program", "--serve"]
    assert Counting(command="other")._command == ["other"]


def test_a_subclass_without_a_default_command_is_refused() -> None:
    class Nameless(Counting):
        default_command = ()

    with pytest.raises(ValueError, match="default_command"):
        Nameless()


def test_the_program_is_looked_up_on_the_providers_own_path(tmp_path: Any) -> None:
    program = tmp_path / "counting-program"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    assert Counting(env={"PATH": "/nonexistent"})._program() is None
    assert Counting(env={"PATH": str(tmp_path)})._program() == str(program)


def test_discovery_runs_once_for_concurrent_and_repeated_listings() -> None:
    provider = Counting(additional_models=["extra", {"id": "found", "label": "Duplicate"}])

    async def run() -> list[list[ModelInfo]]:
        first = await asyncio.gather(*(provider.list_models(LAUNCHER) for _ in range(3)))
        return [*first, await provider.list_models(LAUNCHER)]

    listings = asyncio.run(run())
    assert provider.discoveries == 1
    for models in listings:
        # additionalModels merge by id: the discovered "found" wins over the duplicate.
        assert [(m.id, m.label) for m in models] == [("found", "Found"), ("extra", "extra")]


def test_configured_models_replace_discovery() -> None:
    provider = Counting(models=["a", {"id": "b", "label": "Bee"}, 7])
    models = asyncio.run(provider.list_models(LAUNCHER))
    assert [(m.id, m.label) for m in models] == [("a", "a"), ("b", "Bee")]
    assert provider.discoveries == 0


def test_derive_keeps_the_subclass_and_merges_overrides() -> None:
    base = Counting(env={"A": "1"}, additional_models=["x"], start_timeout=5.0)
    derived = base.derive(
        "mine", "Mine", {"command": ["/opt/c"], "env": {"B": "2"}, "additionalModels": ["y"]}
    )
    assert isinstance(derived, Counting)
    assert (derived.id, derived.label) == ("mine", "Mine")
    assert derived._command == ["/opt/c"]
    assert derived._env == {"A": "1", "B": "2"}
    assert derived._additional_models == ["x", "y"]
    assert derived._start_timeout == 5.0
    # The base is untouched: every custom provider starts from it.
    assert (base.id, base._command, base._env) == (
        "counting",
        ["counting-program", "--serve"],
        {"A": "1"},
    )


def test_derive_refuses_a_bad_override_naming_the_field() -> None:
    with pytest.raises(InvalidParams, match="env must be an object"):
        Counting().derive("mine", "Mine", {"env": ["not", "a", "mapping"]})
