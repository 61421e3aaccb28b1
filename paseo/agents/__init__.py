"""Agents: the manager service, timelines, permissions, and agent program processes."""
