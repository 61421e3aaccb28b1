"""The hook that hands the four built-in sources to the kernel."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import PluginSourceRegistrar

from paseo_plugin_sources.directory import DirectorySource
from paseo_plugin_sources.git import GitSource
from paseo_plugin_sources.npm import NpmSource
from paseo_plugin_sources.pypi import PypiSource


@hookimpl
def paseo_register_plugin_sources(register: PluginSourceRegistrar) -> None:
    """Register ``git``, ``npm``, ``pypi`` and ``directory`` (cheap: nothing is fetched here)."""
    register(GitSource())
    register(NpmSource())
    register(PypiSource())
    register(DirectorySource())
