"""The provider conformance suite on ``claude``: the real pinned Claude Code against the fake."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.agents_env import agent_binary, claude_code_env
from paseo_claude.provider import ClaudeOptions, ClaudeProvider

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import ProviderConformance

pytestmark = pytest.mark.e2e


class TestClaudeConformance(ProviderConformance):
    """Default mode: Claude Code asks before writing a file."""

    def make_provider(self) -> ClaudeProvider:
        return ClaudeProvider(options=ClaudeOptions(command=(str(agent_binary("claude")),)))

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return claude_code_env(fake.url, root, max_retries=0)
