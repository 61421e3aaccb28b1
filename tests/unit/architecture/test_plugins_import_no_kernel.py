"""Plugins are written against the contract alone: nothing under ``plugins/`` imports ``paseo``
or ``paseo.*`` (``paseo_hookspecs`` and libraries only), anywhere in a module."""

from __future__ import annotations

from helpers.import_graph import REPO, imports_of, python_files

PLUGINS = REPO / "plugins"


def _kernel(module: str) -> bool:
    return module == "paseo" or module.startswith("paseo.")


def test_no_plugin_module_imports_the_kernel() -> None:
    offenders: dict[str, list[str]] = {}
    for path in python_files(PLUGINS):
        for found in imports_of(PLUGINS, path):
            if _kernel(found.module):
                where = f"{path.relative_to(REPO)}:{found.line}: {found.module}"
                offenders.setdefault(where, []).extend([found.name] if found.name else [])
    assert not offenders, "plugins must import paseo_hookspecs, not the kernel:\n" + "\n".join(
        f"{where} ({', '.join(names)})" if names else where for where, names in offenders.items()
    )
