"""Paseo-owned Git worktrees: creation (branch off, existing branch, change request),
``paseo.json`` lifecycle commands, service ports, archive and restore."""
