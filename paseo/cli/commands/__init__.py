"""Kernel command groups; each module exposes ``configure(parser)``."""
