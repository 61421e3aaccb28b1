"""Fixtures of the chat end-to-end tests: the daemon harness of :mod:`e2e.daemon.harness`."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
