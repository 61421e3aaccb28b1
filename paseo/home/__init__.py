"""The state root: its layout, its ownership lock and its meta files."""

from paseo.home.paths import HomeLayout, resolve_home

__all__ = ["HomeLayout", "resolve_home"]
