"""The provider conformance suite, run against the example provider and the fake model.

``ProviderConformance`` (shipped with Paseo in ``paseo.testing``) drives the provider the way the
daemon does, with the kernel's process launcher, against the scripted fake model server; every
scenario it defines is a test here.
"""

from __future__ import annotations

from pathlib import Path

from paseo_example_provider.provider import ExampleProvider
from paseo_hookspecs.interfaces.agent import AgentProvider

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import ProviderConformance


class TestExampleProvider(ProviderConformance):
    permission_mode = "ask"  # writes need permission

    def make_provider(self) -> AgentProvider:
        return ExampleProvider()

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return {
            "EXAMPLE_AGENT_BASE_URL": fake.openai_url,
            "EXAMPLE_AGENT_API_KEY": "test-key",
            "EXAMPLE_AGENT_STATE_DIR": str(root / "state"),
            "HOME": str(root / "home"),
        }
