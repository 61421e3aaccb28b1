"""The built-in ``omp`` provider through the real daemon and CLI: the pinned oh-my-pi on the
pinned bun against the fake's Anthropic API (see :mod:`e2e.acp.program_life`). omp's start-up
requests to public model catalogues are refused by the proxy (see ``conftest.py``) and every
turn still works."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.acp.program_life import walk_agent_life
from e2e.daemon.harness import RealDaemon
from helpers.agents_env import OMP_START_UP_HOSTS, agent_binary, omp_env

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e


def shell_write(path: str, content: str) -> str:
    """omp's ``write`` tool never asks; its shell does (see :mod:`paseo_acp.omp`)."""
    return f"Create the file. [[shell:printf '%s' {content} > {path}]]"


def test_omp_life_through_the_daemon(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    walk_agent_life(
        daemon=daemon,
        fake=fake,
        proxy=proxy,
        tmp_path=tmp_path,
        provider="omp",
        settings={
            "command": [str(agent_binary("omp")), "acp"],
            "env": omp_env(fake.url, tmp_path / "omp"),
        },
        mode="default",
        write_prompt=shell_write,
        known_hosts=OMP_START_UP_HOSTS,
    )
