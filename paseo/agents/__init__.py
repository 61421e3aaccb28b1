"""Agents: the agent service (:mod:`paseo.agents.manager`) and its rooms, timelines, providers'
registry, and agent program processes (the kernel's launcher and its durable tracker)."""
