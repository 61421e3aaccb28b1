"""Fixtures of the daemon end-to-end tests (defined in :mod:`e2e.daemon.harness`)."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
