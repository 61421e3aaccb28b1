"""The provider conformance suite on the built-in ``omp`` provider: the pinned oh-my-pi
(``omp acp`` on the pinned bun) against the fake's Anthropic API.

omp tries public model catalogues at start-up; the suite's refusing proxy refuses them, and fails
the test on an attempt anywhere else. Its ``write`` tool never asks, so
the write prompts here use the shell, which does.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from helpers.agents_env import OMP_START_UP_HOSTS, agent_binary, omp_env
from paseo_acp.omp import OmpProvider
from paseo_hookspecs.interfaces.agent import AgentProvider

from paseo.testing.fake_model import FakeModelServer
from paseo.testing.provider_conformance import ProviderConformance

pytestmark = pytest.mark.e2e


def shell_write(path: str, content: str) -> str:
    """A prompt the fake answers with omp's (asking) shell tool writing ``content``."""
    return f"Create the file. [[shell:printf '%s' {shlex.quote(content)} > {shlex.quote(path)}]]"


class TestOmp(ProviderConformance):
    """``omp acp`` in its default mode, which asks before shell commands."""

    permission_mode = "default"
    known_outbound_hosts = OMP_START_UP_HOSTS

    def make_provider(self) -> AgentProvider:
        return OmpProvider(overrides={"command": [str(agent_binary("omp")), "acp"]})

    def session_env(self, fake: FakeModelServer, root: Path) -> dict[str, str]:
        return omp_env(fake.url, root)

    def prompt_write(self, path: str, content: str) -> str:
        return shell_write(path, content)
