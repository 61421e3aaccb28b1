"""Per-agent environments: checked names and values, 0600 files, gone with the agent."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest
from paseo_hookspecs.errors import InvalidParams

from paseo.agents.environments import AgentEnvironments, checked


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"1ABC": "x"}, "1ABC"),
        ({"A=B": "x"}, "A=B"),
        ({"PASEO_AGENT_ID": "forged"}, "PASEO_AGENT_ID"),
        ({"OK": "a\0b"}, "NUL"),
    ],
)
def test_bad_entries_are_refused_with_what_is_wrong(env: dict[str, str], names: str) -> None:
    with pytest.raises(InvalidParams, match=names):
        checked(env)


def test_variables_are_kept_private_and_forgotten(tmp_path: Path) -> None:
    directory = tmp_path / "agent-env"

    async def scenario() -> None:
        store = AgentEnvironments(directory)
        await store.put("agent-1", {"TOKEN": "secret"})
        await store.put("agent-2", {})
        path = directory / "agent-1.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert not (directory / "agent-2.json").exists()
        # A fresh reader (a restarted daemon) gets the same variables from disk.
        assert await AgentEnvironments(directory).get("agent-1") == {"TOKEN": "secret"}
        assert await AgentEnvironments(directory).get("agent-2") == {}
        await store.forget("agent-1")
        assert not path.exists()
        assert await AgentEnvironments(directory).get("agent-1") == {}

    asyncio.run(scenario())


def test_a_damaged_file_starts_the_agent_without_it(tmp_path: Path) -> None:
    tmp_path.joinpath("agent-1.json").write_text("not json")
    tmp_path.joinpath("agent-2.json").write_text('["a list"]')
    store = AgentEnvironments(tmp_path)
    assert asyncio.run(store.get("agent-1")) == {}
    assert asyncio.run(store.get("agent-2")) == {}
