"""The metadata service's choices: which models it tries, in what order, within what time, and
how an answer becomes a title or a branch name (the agents room is a scripted port)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from paseo_hookspecs.errors import Unavailable

from paseo.config import ResolvedConfig, load_config
from paseo.metadata import tasks
from paseo.metadata.service import AUTOMATIC, Candidate, MetadataService


@dataclass
class Config:
    resolved: ResolvedConfig


def config(providers: list[dict[str, Any]] | None, tmp_path: Any) -> Config:
    path = tmp_path / "config.json"
    body = {"agents": {"metadataGeneration": {"providers": providers}}} if providers else {}
    path.write_text(json.dumps(body))
    return Config(load_config(path, {}).resolved)


@dataclass
class Agents:
    """Answers per provider: a text, an exception to raise, or ``None`` for "never answers"."""

    answers: dict[str, Any]
    ready: set[str] = field(default_factory=lambda: {"claude", "codex", "opencode"})
    asked: list[Candidate] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)
    titled: asyncio.Event = field(default_factory=asyncio.Event)

    def usable(self, provider: str) -> bool:
        return provider in self.ready

    async def answer(self, candidate: Candidate, cwd: str, task: tasks.Task, within: float) -> str:
        self.asked.append(candidate)
        answer = self.answers.get(candidate.provider)
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            async with asyncio.timeout(within):
                await asyncio.Event().wait()
        return str(answer)

    async def remove_leftovers(self) -> int:
        return 0

    async def set_title(self, agent_id: str, title: str) -> None:
        self.titles[agent_id] = title
        self.titled.set()


def run(body: Any) -> Any:
    return asyncio.run(asyncio.wait_for(body, 10))


def test_automatic_tries_the_ready_models_in_order_until_one_fits(tmp_path: Any) -> None:
    agents = Agents(
        {"codex": "not json", "opencode": '```json\n{"branch": "Fix: Login Redirect!"}\n```'},
        ready={"codex", "opencode"},
    )
    service = MetadataService(agents=agents, config=config(None, tmp_path))
    assert run(service.branch_name("fix the login", "/w")) == "fix-login-redirect"
    assert agents.asked == [c for c in AUTOMATIC if c.provider != "claude"]


def test_manual_tries_only_the_configured_models(tmp_path: Any) -> None:
    agents = Agents({"claude": Unavailable("down"), "codex": '{"title": "Never"}'})
    manual = [{"provider": "claude", "model": "claude-sonnet-4-6", "thinkingOptionId": "low"}]
    service = MetadataService(agents=agents, config=config(manual, tmp_path))
    assert run(service.title("anything", "/w")) is None
    assert agents.asked == [Candidate("claude", "claude-sonnet-4-6", "low")]


def test_the_whole_generation_is_bounded(tmp_path: Any) -> None:
    agents = Agents({"claude": None, "codex": '{"title": "Too late"}'})
    service = MetadataService(agents=agents, config=config(None, tmp_path), timeout=lambda: 0.05)
    assert run(service.title("anything", "/w")) is None
    assert [c.provider for c in agents.asked] == ["claude"]


def test_a_title_is_set_in_the_background(tmp_path: Any) -> None:
    async def body() -> dict[str, str]:
        agents = Agents({"claude": '{"title": "  \\"Fix the parser.\\"  "}'})
        service = MetadataService(agents=agents, config=config(None, tmp_path))
        service.request_title("a1", "/w", "fix the parser")
        await agents.titled.wait()
        await service.stop()
        return agents.titles

    assert run(body()) == {"a1": "Fix the parser"}


@pytest.mark.parametrize(
    ("raw", "branch"),
    [
        ("feat/Add Logout", "feat/add-logout"),
        ("  FIX the bug  ", "fix-the-bug"),
        ("a/b/c", "a-b/c"),
        ("///", None),
        ("x" * 80, "x" * tasks.BRANCH_LIMIT),
    ],
)
def test_branch_names_are_cleaned_to_what_git_accepts(raw: str, branch: str | None) -> None:
    assert tasks.clean_branch({"branch": raw}) == branch


def test_answers_must_fit_the_schema() -> None:
    schema = tasks.title_task("x").schema
    assert tasks.parse_answer('{"title": "T"}', schema) == {"title": "T"}
    assert tasks.parse_answer('Sure! {"title": "T"} done', schema) == {"title": "T"}
    for bad in (None, "", "no json", '{"title": 3}', '{"other": "x"}', "[1]"):
        assert tasks.parse_answer(bad, schema) is None
    long = tasks.clean_title({"title": "word " * 40})
    assert long is not None
    assert len(long) <= tasks.TITLE_LIMIT


def test_internal_agents_run_two_at_a_time_and_waiting_counts_against_the_time(
    tmp_path: Any,
) -> None:
    agents = Agents({"claude": None})
    service = MetadataService(agents=agents, config=config(None, tmp_path), timeout=lambda: 0.2)

    async def body() -> list[str | None]:
        return list(await asyncio.gather(*(service.title(str(n), "/w") for n in range(3))))

    assert run(body()) == [None, None, None]
    # The third never got a turn before its time ran out.
    assert len(agents.asked) == 2
