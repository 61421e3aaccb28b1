"""The state root: its layout, its ownership lock and its meta files."""

from paseo.home.lock import HomeBusy, HomeLock, read_pid_file
from paseo.home.paths import HomeLayout, resolve_home

__all__ = ["HomeBusy", "HomeLayout", "HomeLock", "read_pid_file", "resolve_home"]
