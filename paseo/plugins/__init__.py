"""Plugin loading: discovery, isolation, the typed manager, and named drivers."""

from paseo.plugins.manager import PaseoPluginManager, hookspec_names
from paseo.plugins.policy import LoadPolicy
from paseo.plugins.records import PluginLoadError, PluginRecord

__all__ = [
    "LoadPolicy",
    "PaseoPluginManager",
    "PluginLoadError",
    "PluginRecord",
    "hookspec_names",
]
