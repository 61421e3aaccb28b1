"""A real daemon process per test, on a free port and a private home: daemon_rpc's fixture."""

from integration.daemon_rpc.conftest import daemon_factory

__all__ = ["daemon_factory"]
