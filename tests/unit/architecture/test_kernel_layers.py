"""The kernel's layers point one way: only the composition root (``paseo.daemon``) knows the
services and their adapters. The wire layer and the services never import the daemon, and a
service module never imports its RPC adapter (adapters reach it through a ``ServiceRef``)."""

from __future__ import annotations

import pytest
from helpers.import_graph import REPO, imports_of, module_name, python_files

PACKAGE = REPO / "paseo"

DAEMON_FREE = ("rpc", "services", "git", "projects", "workspaces", "worktrees")
"""Packages that must not import ``paseo.daemon``."""


def _imported(path_prefix: str) -> list[tuple[str, str]]:
    """``(module, imported module)`` for every import of the modules under ``paseo/<prefix>``."""
    return [
        (module_name(REPO, path), found.module)
        for path in python_files(PACKAGE / path_prefix)
        for found in imports_of(REPO, path)
    ]


@pytest.mark.parametrize("package", DAEMON_FREE)
def test_only_the_composition_root_imports_the_daemon(package: str) -> None:
    offenders = [
        f"{module} imports {target}"
        for module, target in _imported(package)
        if target == "paseo.daemon" or target.startswith("paseo.daemon.")
    ]
    assert not offenders, "\n".join(offenders)


def _is_adapter(module: str) -> bool:
    """An RPC adapter module: ``….rpc``, ``….<group>_rpc`` (``workspaces.project_rpc``) or
    ``….adapter``."""
    last = module.rpartition(".")[2]
    return "." in module and (last in ("rpc", "adapter") or last.endswith("_rpc"))


@pytest.mark.parametrize("package", ["git", "projects", "workspaces", "worktrees"])
def test_services_do_not_import_rpc_adapters(package: str) -> None:
    offenders = [
        f"{module} imports {target}"
        for module, target in _imported(package)
        if module.endswith(".service") and _is_adapter(target)
    ]
    assert not offenders, "\n".join(offenders)
