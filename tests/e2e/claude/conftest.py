"""Fixtures for the ``claude`` provider tests (defined in :mod:`harness`)."""

from e2e.claude.harness import claude, fake, proxy

__all__ = ["claude", "fake", "proxy"]
