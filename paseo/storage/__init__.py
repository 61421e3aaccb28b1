"""Kernel-side work on durable state that spans store drivers (``paseo store …``).

The drivers themselves are plugins (``paseo.store`` entry points); this package only moves
records between them through the store contract. Import :mod:`paseo.storage.migrate` directly:
it loads pydantic models, which the CLI's fast paths must not pay for.
"""
