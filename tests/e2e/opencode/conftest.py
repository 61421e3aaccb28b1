"""Fixtures of the ``opencode`` end-to-end tests: the daemon of :mod:`e2e.daemon.harness`, and a
refusing proxy that knows OpenCode's one start-up attempt (installing ``@opencode-ai/plugin``
from registry.npmjs.org): refused like any other, but the only one allowed to happen."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from e2e.daemon.harness import daemon

from paseo.testing.fake_model import RefusingProxy

NPM_ATTEMPT = "CONNECT registry.npmjs.org:443"

__all__ = ["NPM_ATTEMPT", "daemon", "proxy"]


@pytest.fixture
def proxy() -> Iterator[RefusingProxy]:
    with RefusingProxy(expected=(NPM_ATTEMPT,)) as refusing:
        yield refusing
        assert refusing.attempts == [], "OpenCode tried to leave 127.0.0.1"
