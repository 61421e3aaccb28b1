"""Fixtures of the Copilot end-to-end tests: the real daemon's (see :mod:`e2e.daemon.harness`)."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
