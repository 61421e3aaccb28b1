"""The usage end-to-end tests use the daemon harness of ``e2e.daemon``."""

from e2e.daemon.harness import daemon

__all__ = ["daemon"]
