"""Fixtures of the ``pi`` end-to-end tests (the daemon ones come from :mod:`e2e.daemon.harness`)."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
