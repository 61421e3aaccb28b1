"""The ``pi`` and ``opencode`` providers' availability and derivation, without a session."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from e2e.pi.env import pi_env
from helpers.agents_env import agent_binary
from paseo_opencode.provider import OpenCodeProvider
from paseo_pi.provider import KEY_VARIABLES, PiProvider

pytestmark = pytest.mark.e2e


def test_missing_programs_are_unavailable_with_the_install_command(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    pi = asyncio.run(PiProvider(env=env).availability())
    opencode = asyncio.run(OpenCodeProvider(env=env).availability())
    assert pi.status == "unavailable"
    assert "npm install -g @mariozechner/pi-coding-agent@0.73.1" in (pi.reason or "")
    assert opencode.status == "unavailable"
    assert "npm install -g opencode-ai" in (opencode.reason or "")


def test_pi_without_credentials_is_not_ready(tmp_path: Path) -> None:
    """Pi would start and then fail every turn: availability says what to configure."""
    empty = tmp_path / "agent"
    empty.mkdir()
    provider = PiProvider(
        command=[str(agent_binary("pi"))],
        env={"PI_CODING_AGENT_DIR": str(empty), **dict.fromkeys(KEY_VARIABLES, "")},
    )
    availability = asyncio.run(provider.availability())
    assert availability.status == "unavailable"
    assert "Pi 0.73.1 has no model credentials" in (availability.reason or "")
    assert str(empty / "models.json") in (availability.reason or "")


def test_configured_programs_are_ready_with_their_version(tmp_path: Path) -> None:
    env = pi_env("http://127.0.0.1:9", tmp_path)
    pi = asyncio.run(PiProvider(command=[str(agent_binary("pi"))], env=env).availability())
    assert (pi.status, pi.reason) == ("ready", "Pi 0.73.1")
    opencode = OpenCodeProvider(command=[str(agent_binary("opencode"))])
    assert asyncio.run(opencode.availability()).reason == "OpenCode 1.18.33"


def test_custom_providers_extend_pi_and_opencode() -> None:
    pi = PiProvider(env={"A": "1"}).derive("my-pi", "My Pi", {"env": {"B": "2"}, "models": ["x/y"]})
    assert (pi.id, pi.label) == ("my-pi", "My Pi")
    assert [m.id for m in asyncio.run(pi.list_models(_NO_LAUNCHER))] == ["x/y"]
    opencode = OpenCodeProvider().derive("my-oc", "My OpenCode", {"models": ["fake/m"]})
    assert opencode.id == "my-oc"
    assert [m.id for m in asyncio.run(opencode.list_models(_NO_LAUNCHER))] == ["fake/m"]


class _NoLauncher:
    async def launch(self, *_args: object, **_kwargs: object) -> object:
        raise AssertionError("a listing with configured models must start nothing")


_NO_LAUNCHER: Any = _NoLauncher()
