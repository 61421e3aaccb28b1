"""Workspaces: the durable placement of work (exact cwd, backing checkout, project membership),
the single provisioning entry point, reconciliation of Git facts and the label catalog."""
