"""Fixtures of the MCP end-to-end tests: the daemon harness of :mod:`e2e.daemon.harness`."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
