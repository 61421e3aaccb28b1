"""The notification tests run the real daemon with the ``scripted`` provider (see ``agents``)."""

from integration.agents.conftest import agent_daemon_factory, workdir

__all__ = ["agent_daemon_factory", "workdir"]
