"""Fixtures for the ``claude`` provider tests (defined in :mod:`harness`)."""

from e2e.claude.harness import claude

__all__ = ["claude"]
