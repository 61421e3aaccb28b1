"""Fixtures of the Hub end-to-end tests: the real daemon of :mod:`e2e.daemon.harness`."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
