"""Notifications for agents that need attention, without the phone app (docs/notifications.md).

Built on the agent port alone: webhook, ntfy and local-command sinks, each with a bounded queue.
"""
