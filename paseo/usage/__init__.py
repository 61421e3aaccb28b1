"""Usage accounting queries and budgets (see docs/usage.md)."""
