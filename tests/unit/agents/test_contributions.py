"""Session contributions (:mod:`paseo.agents.contributions`): what plugins add to every session."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from paseo_hookspecs.agents import SessionExtras
from paseo_hookspecs.records import AgentRecord

from paseo.agents.contributions import SessionContributions

NOW = "2026-01-01T00:00:00+00:00"


def record(agent_id: str, *, internal: bool = False) -> AgentRecord:
    fields: dict[str, Any] = {
        "id": agent_id,
        "provider": "p",
        "cwd": "/w",
        "createdAt": NOW,
        "updatedAt": NOW,
    }
    if internal:
        fields["internal"] = True
    return AgentRecord.model_validate(fields)


class Legacy:
    def mcp_servers(self, record: AgentRecord) -> dict[str, Any]:
        return {"paseo": {"url": "legacy"}, "kept": {"url": "k"}}


class Adds:
    def __init__(self, name: str, url: str) -> None:
        self.name, self.url = name, url

    def contribute(self, record: AgentRecord) -> SessionExtras:
        return SessionExtras(mcp_servers={self.name: {"url": self.url}}, env={"FROM": self.url})


class Broken:
    def contribute(self, record: AgentRecord) -> SessionExtras:
        raise RuntimeError("contributor bug")


def test_contributors_extend_the_legacy_tools_in_order_and_can_be_removed() -> None:
    contributions = SessionContributions(Legacy())
    remove = contributions.add(Adds("paseo", "plugin"))
    contributions.add(Adds("other", "second"))
    servers, env = contributions.extras(record("a"))
    assert servers == {"paseo": {"url": "plugin"}, "kept": {"url": "k"}, "other": {"url": "second"}}
    assert env == {"FROM": "second"}
    remove()
    remove()  # idempotent
    servers, _ = contributions.extras(record("a"))
    assert servers["paseo"] == {"url": "legacy"}


def test_internal_agents_get_only_the_contributors_that_ask_for_them() -> None:
    contributions = SessionContributions()
    contributions.add(Adds("users", "u"))
    contributions.add(Adds("all", "a"), include_internal=True)
    servers, _ = contributions.extras(record("helper", internal=True))
    assert servers == {"all": {"url": "a"}}


def test_a_raising_contributor_is_logged_and_skipped(caplog: pytest.LogCaptureFixture) -> None:
    contributions = SessionContributions()
    contributions.add(Broken())
    contributions.add(Adds("fine", "f"))
    with caplog.at_level(logging.ERROR, logger="paseo.agents"):
        servers, _ = contributions.extras(record("a"))
    assert servers == {"fine": {"url": "f"}}
    assert any("contributor" in r.getMessage() and r.exc_info for r in caplog.records)
