"""Fixtures of the omp end-to-end tests: the real daemon's (see :mod:`e2e.daemon.harness`),
and a refusing proxy that expects omp's start-up catalogue requests (and only those)."""

from collections.abc import Iterator

import pytest
from e2e.daemon.harness import daemon
from helpers.agents_env import OMP_START_UP_HOSTS

from paseo.testing.fake_model import RefusingProxy

__all__ = ["daemon", "proxy"]


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    """omp tries public model catalogues at every start-up: the proxy must have seen and
    refused them, and nothing else."""
    with RefusingProxy() as refusing:
        yield refusing
        assert refusing.attempts, "omp's start-up catalogue requests never reached the proxy"
        assert refusing.unexpected(OMP_START_UP_HOSTS) == [], "omp tried to leave 127.0.0.1"
