"""The provider conformance suite on ``codex``: the real pinned Codex against the fake."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.agents_env import agent_binary, codex_env
from paseo_codex.provider import CodexProvider

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import ProviderConformance

pytestmark = pytest.mark.e2e


class TestCodexConformance(ProviderConformance):
    """Mode ``untrusted``: Codex asks before every change (``auto`` writes inside the
    workspace without asking)."""

    permission_mode = "untrusted"

    def make_provider(self) -> CodexProvider:
        return CodexProvider(command=[str(agent_binary("codex"))])

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return codex_env(fake.url, root)
