"""A daemon serving the TypeScript protocol on its home socket and on a TCP port (with a short
hello timeout, so the 4001 test is quick), shared by the protocol tests of a module."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e.daemon.harness import RealDaemon

from paseo.testing.fake_model import RefusingProxy

HELLO_TIMEOUT = 1.0
MAX_DETACHED = 24
"""Detached sessions the shared daemon keeps (small, so the cap's test stays quick)."""


class TsDaemon(RealDaemon):
    """A :class:`RealDaemon` with the TypeScript transport's addresses."""

    @property
    def socket_path(self) -> str:
        return str(self.home / "paseo-ts.sock")

    @property
    def tcp_uri(self) -> str:
        """The TCP address the transport bound (any free port: the daemon logs it)."""
        log = (self.home / "daemon.log").read_text()
        found = re.findall(r"transport tswire listening on .*?(ws://127\.0\.0\.1:\d+/ws)", log)
        assert found, "the tswire transport logged no TCP address"
        return found[-1]

    def write_config(
        self,
        providers: dict[str, object] | None = None,
        plugins: dict[str, object] | None = None,
    ) -> None:
        """config.json with ``providers`` and, beside tswire's settings, ``plugins``."""
        config = {
            "agents": {"providers": providers or {}},
            "plugins": {
                **(plugins or {}),
                "tswire": {
                    "settings": {
                        "listen": "127.0.0.1:0",
                        "helloTimeout": HELLO_TIMEOUT,
                        "maxDetachedSessions": MAX_DETACHED,
                    }
                },
            },
        }
        (self.home / "config.json").write_text(json.dumps(config, indent=2))

    def local_credential(self) -> str:
        return (self.home / "local-credential").read_text().strip()


@pytest.fixture(scope="module")
def ts_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TsDaemon]:
    """Started with no agent program configured; stopped and swept after the module."""
    with RefusingProxy() as proxy:
        daemon = TsDaemon(Path(tmp_path_factory.mktemp("tswire")), proxy)
        daemon.write_config()
        daemon.start()
        try:
            yield daemon
        finally:
            daemon.cleanup()
        assert proxy.attempts == []
