"""Loops: a fresh worker agent repeated on a task until shell checks pass or a verifier agent
approves, within limits. Driven through the agent port alone (``DaemonContext.agents``)."""
