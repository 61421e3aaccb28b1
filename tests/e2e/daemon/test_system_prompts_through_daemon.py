"""``daemon.appendSystemPrompt`` and an agent profile's system prompt reach every provider's
program, proven by what the fake model server received.

One ``paseo run --profile`` turn per provider, on a daemon whose config holds the provider, a
profile for it (a system prompt, a label) and an appended system prompt: the model request the
turn caused carries both texts outside the user's prompt (in the API's system or developer
part), in that order, and the agent got the profile's label. ``acp`` is Claude Code's ACP
adapter (a custom provider extending ``acp``), which advertises an appendable system prompt.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, provider_settings
from e2e.opencode.conftest import NPM_ATTEMPT
from e2e.opencode.env import opencode_env
from e2e.pi.env import pi_env
from helpers.agents_env import OMP_START_UP_HOSTS, agent_binary, copilot_env, omp_env

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

PROFILE_PROMPT = "PROFILE-SYSTEM-7f3a: answer as the reviewer."
APPENDED_PROMPT = "APPENDED-SYSTEM-c91e: the daemon says hello."

PROVIDERS = ("claude", "codex", "acp", "opencode", "pi", "copilot", "omp")


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    """Refuses everything not aimed at 127.0.0.1; OpenCode's npm attempt and omp's catalogue
    requests are the known ones, anything else fails the test."""
    with RefusingProxy(expected=(NPM_ATTEMPT,)) as refusing:
        yield refusing
        assert refusing.unexpected(OMP_START_UP_HOSTS) == [], "a program tried to leave"


def settings(provider: str, fake: FakeModelServer, root: Path) -> tuple[str, dict[str, Any]]:
    """``(provider id, agents.providers entry)`` of each program against the fake."""
    state = root / provider
    if provider in ("claude", "codex"):
        return provider, provider_settings(provider, fake, root)
    if provider == "acp":
        return "claude-acp", provider_settings("claude-acp", fake, root)
    if provider == "opencode":
        return provider, {
            "command": [str(agent_binary("opencode"))],
            "env": opencode_env(fake.url, state),
        }
    if provider == "pi":
        return provider, {"command": [str(agent_binary("pi"))], "env": pi_env(fake.url, state)}
    if provider == "copilot":
        return provider, {
            "command": [str(agent_binary("copilot")), "--acp"],
            "env": copilot_env(fake.url, state),
        }
    return provider, {"command": [str(agent_binary("omp")), "acp"], "env": omp_env(fake.url, state)}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_profile_and_appended_system_prompts_reach_the_model(
    provider: str, daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    provider_id, entry = settings(provider, fake, tmp_path / "programs")
    config = {
        "daemon": {
            "appendSystemPrompt": APPENDED_PROMPT,
            "agentProfiles": [
                {
                    "id": "rev",
                    "name": "Reviewer",
                    "provider": provider_id,
                    "systemPrompt": PROFILE_PROMPT,
                    "labels": {"via": "profile"},
                }
            ],
        },
        "agents": {"providers": {provider_id: entry}},
    }
    (daemon.home / "config.json").write_text(json.dumps(config, indent=2))
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()

    marker = f"prompt-marker-{provider}"
    ran = daemon.cli(
        "run", "--profile", "Reviewer", "--cwd", str(work), "--title", "main",
        "--wait-timeout", f"{TURN_TIMEOUT:.0f}s", f"{marker} [[reply:reviewed]]",
    )  # fmt: skip
    assert ran.stdout == "reviewed\n", ran.stderr
    record = json.loads(daemon.cli("inspect", "main", "-o", "json").stdout)["agent"]
    assert (record["provider"], record["labels"]) == (provider_id, {"via": "profile"})

    # The turn's own request offers tools; side requests (a title) do not.
    turn = [r for r in fake.model_requests() if marker in r.prompt and r.tool_names]
    assert turn, [r.prompt[:80] for r in fake.model_requests()]
    body = turn[0].body.decode("utf-8", "replace")
    assert PROFILE_PROMPT not in turn[0].prompt
    assert PROFILE_PROMPT in body, f"{provider}: the profile's system prompt is missing"
    assert APPENDED_PROMPT in body, f"{provider}: daemon.appendSystemPrompt is missing"
    assert body.index(PROFILE_PROMPT) < body.index(APPENDED_PROMPT)
