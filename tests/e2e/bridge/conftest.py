"""Fixtures of the bridge end-to-end test (defined in :mod:`e2e.daemon.harness`)."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
