"""Generated metadata through the real daemon: the pinned Claude Code as the internal
structured-output agent (``agents.metadataGeneration.providers``), the fake scripting its answer.

The fake answers a structured-output request (Claude Code's ``--json-schema`` offers the model a
``StructuredOutput`` tool) with a JSON document whose strings are the ``[[reply:…]]`` text of
the prompt, which holds the user's prompt: so the user's prompt scripts the title and the
branch name. The internal agents are never listed and are gone afterwards; a failing
generation falls back to an untitled agent and a random ``paseo/<hex>`` branch, silently.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, capture_output=True,
        text=True, timeout=30, check=True,
    )  # fmt: skip
    return done.stdout.strip()


def structured_requests(fake: FakeModelServer) -> list[tuple[str, dict[str, Any]]]:
    """``(model, answer schema)`` of each request offering Claude Code's StructuredOutput tool
    (how its ``--json-schema`` asks for the answer against a custom API endpoint)."""
    found = []
    for request in fake.model_requests():
        for tool in request.json.get("tools") or []:
            if tool.get("name") == "StructuredOutput":
                found.append((request.json["model"], tool["input_schema"]))
    return found


def test_a_generated_title_and_branch_name_and_the_silent_fallback(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    config = {
        "agents": {
            "providers": {"claude": provider_settings("claude", fake, tmp_path / "programs")},
            "metadataGeneration": {
                "providers": [{"provider": "claude", "model": "claude-haiku-4-5"}]
            },
        }
    }
    (daemon.home / "config.json").write_text(json.dumps(config, indent=2))
    daemon.start(PASEO_METADATA_TIMEOUT=str(TURN_TIMEOUT))
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("hello\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")

    # An untitled agent: its first prompt names it.
    ran = daemon.cli(
        "run", "--provider", "claude", "--cwd", str(repo), "--wait-timeout",
        f"{TURN_TIMEOUT:.0f}s", "Fix it. [[reply:Fix the login redirect]]",
    )  # fmt: skip
    assert ran.stdout == "Fix the login redirect\n", ran.stderr

    def titled() -> list[dict[str, Any]]:
        agents = json.loads(daemon.cli("ls", "-o", "json").stdout)
        return agents if agents and agents[0]["title"] else []

    agents = poll(titled, timeout=TURN_TIMEOUT, what="the generated title")
    assert [a["title"] for a in agents] == ["Fix the login redirect"]
    asked = structured_requests(fake)
    assert [(model, schema["required"]) for model, schema in asked] == [
        ("claude-haiku-4-5", ["title"])
    ]

    with daemon.client() as client:
        # A new worktree without a branch: the name comes from what the work is about.
        created = client.call(
            "worktree.create",
            {"cwd": str(repo), "prompt": "Add a logout button [[reply:feat/Logout Button]]"},
        )
        assert created["worktree"]["branch"] == "feat/logout-button"
        assert git(repo, "rev-parse", "--abbrev-ref", "feat/logout-button") == "feat/logout-button"

        # Generation fails (the model answers HTTP 400): a random branch, no error.
        failed = client.call(
            "worktree.create", {"cwd": str(repo), "prompt": "Anything [[error:400]]"}
        )
        assert re.fullmatch(r"paseo/[0-9a-f]{8}", failed["worktree"]["branch"])

        # A commit message for the staged change, and change-request text for the branch:
        # the change itself scripts the answer.
        (repo / "README.md").write_text("hello\n[[reply:Greet the reader]]\n")
        git(repo, "add", "README.md")
        commit = client.call("metadata.commit-message", {"cwd": str(repo)})
        assert commit == {
            "generated": True,
            "subject": "Greet the reader",
            "body": "Greet the reader",
        }
        git(repo, "checkout", "-q", "-b", "topic")
        git(repo, "commit", "-q", "-m", "Greet the reader")
        change = client.call("metadata.change-request", {"cwd": str(repo), "base": "main"})
        assert (change["generated"], change["title"]) == (True, "Greet the reader")
        assert [schema["required"] for _, schema in structured_requests(fake)][-2:] == [
            ["subject", "body"],
            ["title", "body"],
        ]

        # Only the user's agent was ever listed; every internal agent and its process is gone.
        listed = client.call("agent.list", {"includeArchived": True})["agents"]
        assert [a["id"] for a in listed] == [agents[0]["id"]]
        stored = {p.stem for p in (daemon.home / "agents").rglob("*.json")}
        assert stored == {agents[0]["id"]}
        assert agent_ids_running(daemon) <= {agents[0]["id"]}


def agent_ids_running(daemon: RealDaemon) -> set[str]:
    """``PASEO_AGENT_ID`` of every live process the daemon started."""
    found = set()
    for process in daemon.processes():
        try:
            found.add(process.environ().get("PASEO_AGENT_ID"))
        except (psutil.Error, OSError):
            continue
    return found - {None}
