"""The trash for deleted agents (docs/trash.md)."""
