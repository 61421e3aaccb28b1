"""The built-in ``copilot`` provider through the real daemon and CLI: the pinned Copilot CLI
with a bring-your-own-key provider on the fake, offline (see :mod:`e2e.acp.program_life`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.acp.program_life import walk_agent_life
from e2e.daemon.harness import RealDaemon
from helpers.agents_env import agent_binary, copilot_env

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e


def test_copilot_life_through_the_daemon(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    walk_agent_life(
        daemon=daemon,
        fake=fake,
        proxy=proxy,
        tmp_path=tmp_path,
        provider="copilot",
        # The built-in provider with config.json's command and env: how a user points it at
        # a program and a bring-your-own-key model.
        settings={
            "command": [str(agent_binary("copilot")), "--acp"],
            "env": copilot_env(fake.url, tmp_path / "copilot"),
        },
        # Copilot's default agent mode asks before running tools.
        mode=None,
        write_prompt=lambda path, content: f"Create the file. [[write:{path}:{content}]]",
    )
