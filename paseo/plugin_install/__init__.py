"""Managed plugins: ``paseo plugins install``/``update``/``remove`` and their records.

:class:`PluginInstaller` prepares a plugin through a registered
:class:`~paseo_hookspecs.interfaces.source.PluginSource`, verifies it in a child process and
only then makes it the active version in config.json (see :mod:`paseo.plugin_install.service`
and :mod:`paseo.plugin_install.transaction`).
"""

from paseo.plugin_install.ids import default_plugin_id, validate_plugin_id
from paseo.plugin_install.outcome import Outcome
from paseo.plugin_install.service import PluginInstaller
from paseo.plugin_install.spec import canonical_spec
from paseo.plugins.manifests import PluginManifest, ProviderManifest

__all__ = [
    "Outcome",
    "PluginInstaller",
    "PluginManifest",
    "ProviderManifest",
    "canonical_spec",
    "default_plugin_id",
    "validate_plugin_id",
]
