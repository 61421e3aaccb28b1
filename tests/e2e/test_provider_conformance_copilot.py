"""The provider conformance suite on the built-in ``copilot`` provider: the pinned GitHub
Copilot CLI (``copilot --acp``) with a bring-your-own-key provider pointing at the fake's
OpenAI Chat Completions API, offline."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.agents_env import agent_binary, copilot_env
from paseo_acp.copilot import CopilotProvider
from paseo_hookspecs.interfaces.agent import AgentProvider

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import ProviderConformance

pytestmark = pytest.mark.e2e


class TestCopilot(ProviderConformance):
    """``copilot --acp`` in its default agent mode, where it asks before running tools."""

    def make_provider(self) -> AgentProvider:
        return CopilotProvider(overrides={"command": [str(agent_binary("copilot")), "--acp"]})

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return copilot_env(fake.url, root)
