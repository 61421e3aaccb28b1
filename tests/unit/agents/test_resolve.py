"""Naming agents by id, id prefix or title."""

from __future__ import annotations

import pytest
from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.records import AgentRecord

from paseo.agents.resolve import resolve_agent


def _agent(agent_id: str, title: str | None = None, archived: bool = False) -> AgentRecord:
    return AgentRecord(
        id=agent_id,
        provider="p",
        cwd="/w",
        createdAt="2026-01-01T00:00:00.000Z",
        updatedAt="2026-01-01T00:00:00.000Z",
        title=title,
        archivedAt="2026-01-02T00:00:00.000Z" if archived else None,
    )


AGENTS = [
    _agent("aaaa1111-0000-4000-8000-000000000001", "build"),
    _agent("aaaa2222-0000-4000-8000-000000000002", "review"),
    _agent("bbbb1111-0000-4000-8000-000000000003", "review", archived=True),
    _agent("cccc1111-0000-4000-8000-000000000004", "dup"),
    _agent("dddd1111-0000-4000-8000-000000000005", "dup"),
]


def test_full_id_prefix_and_title() -> None:
    assert resolve_agent(AGENTS[0].id, AGENTS) is AGENTS[0]
    assert resolve_agent("aaaa2", AGENTS) is AGENTS[1]
    assert resolve_agent("AAAA2", AGENTS) is AGENTS[1]
    assert resolve_agent("build", AGENTS) is AGENTS[0]


def test_an_active_agent_wins_a_title_shared_with_archived_ones() -> None:
    assert resolve_agent("review", AGENTS) is AGENTS[1]


def test_ambiguous_names_list_the_candidates() -> None:
    with pytest.raises(InvalidParams) as prefix:
        resolve_agent("aaaa", AGENTS)
    assert prefix.value.data["candidates"] == [AGENTS[0].id, AGENTS[1].id]
    with pytest.raises(InvalidParams):
        resolve_agent("dup", AGENTS)


def test_unknown_names() -> None:
    with pytest.raises(NotFound):
        resolve_agent("zzzz", AGENTS)
    with pytest.raises(NotFound):
        resolve_agent("", AGENTS)
