"""The project registry: projects allocated for the exact roots users select, their names,
cross-host keys and icons."""
