"""Fixtures every end-to-end test shares: the fake model server, the refusing proxy (which
fails the test if anything tried to leave 127.0.0.1) and a working directory."""

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
    """Set as the agent programs' HTTP(S) proxy: records and refuses anything not aimed at the
    fake, and fails the test at teardown if anything was."""
    with RefusingProxy() as refusing:
        yield refusing
        assert refusing.attempts == [], "an agent program tried to leave 127.0.0.1"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path
