"""Fixtures for the ``codex`` mapping tests: the fake model server, a refusing proxy, a workdir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from paseo.testing.fake_model import FakeModelServer, RefusingProxy


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    """Set as Codex's HTTP(S) proxy: records and refuses anything not aimed at the fake."""
    with RefusingProxy() as refusing:
        yield refusing
        assert refusing.attempts == [], "Codex tried to reach the network"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path
