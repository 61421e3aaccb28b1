"""Manifest-declared providers in-process: the plugin manager collects them from loaded
directory plugins, the provider registry turns them into ``acp``-driven custom providers."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers.plugin_sources import plugin_files, write_tree
from paseo_acp import AcpProvider
from paseo_hookspecs.errors import InvalidParams

from paseo.agents.registry import ProviderRegistry
from paseo.plugins import LoadPolicy, PaseoPluginManager, PluginLoadError


def _plugin(root: Path, providers: str, *, files: dict[str, str] | None = None) -> Path:
    """A directory plugin with an empty hook module and ``[tool.paseo] providers = …``."""
    module = f"shim_{uuid.uuid4().hex}"
    write_tree(
        root,
        {
            "pyproject.toml": (
                f'[project]\nname = "{root.name}"\nversion = "1.0"\n\n'
                f'[project.entry-points.paseo]\nx = "{module}"\n\n'
                f"[tool.paseo]\nproviders = {providers}\n"
            ),
            f"{module}.py": "",
            **(files or {}),
        },
    )
    return root


def _manager(
    plugins: dict[str, Path], *, strict: bool = True, disabled: tuple[str, ...] = ()
) -> PaseoPluginManager:
    entries: dict[str, dict[str, Any]] = {
        name: {"source": "directory", "path": str(path), "enabled": name not in disabled}
        for name, path in plugins.items()
    }
    manager = PaseoPluginManager(LoadPolicy(strict=strict, entries=entries))
    manager.load_all()
    return manager


def _registry(
    manager: PaseoPluginManager, config: dict[str, dict[str, Any]] | None = None
) -> ProviderRegistry:
    declared = {pid: p.config_entry() for pid, p in manager.declared_providers().items()}
    return ProviderRegistry(manager.providers(), lambda: config or {}, declared)


def _executable(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)


def test_declared_providers_are_acp_providers_with_resolved_commands(tmp_path: Path) -> None:
    root = _plugin(
        tmp_path / "agents",
        '[{ id = "by-path", label = "By path", bin = "bin/agent", env = { K = "V" } },'
        ' { id = "by-name", label = "By name", bin = "agent" }]',
    )
    _executable(root / "bin" / "agent")
    _executable(root / "node_modules" / ".bin" / "agent")
    manager = _manager({"agents": root})

    declared = manager.declared_providers()
    assert declared["by-path"].command == (str(root / "bin" / "agent"),)
    assert declared["by-path"].env == {"K": "V"}
    assert declared["by-name"].command == (str(root / "node_modules" / ".bin" / "agent"),)
    assert {p.plugin for p in declared.values()} == {"agents"}

    registry = _registry(manager)
    entry = registry.entry("by-path")
    assert (entry.label, entry.extends, entry.problem) == ("By path", "acp", None)
    provider = registry.usable("by-path")
    assert isinstance(provider, AcpProvider)
    assert provider.id == "by-path"
    assert provider.command() == [str(root / "bin" / "agent")]


def test_npm_install_layout_resolves_paths_inside_the_package(tmp_path: Path) -> None:
    # What `paseo plugins install npm:…` leaves: package.json naming the one package, the
    # package under node_modules/, and the generated pyproject.toml.
    root = _plugin(
        tmp_path / "npm-version",
        '[{ id = "npm-acp", label = "npm", bin = "dist/cli.js" }]',
        files={"package.json": '{"dependencies": {"@acme/agent": "file:x.tgz"}}'},
    )
    _executable(root / "node_modules" / "@acme" / "agent" / "dist" / "cli.js")
    declared = _manager({"npm-version": root}).declared_providers()
    assert declared["npm-acp"].command == (
        str(root / "node_modules" / "@acme" / "agent" / "dist" / "cli.js"),
    )


def test_disabled_plugins_declare_nothing(tmp_path: Path) -> None:
    root = _plugin(tmp_path / "off", '[{ id = "off-acp", label = "Off", bin = "agent" }]')
    manager = _manager({"off": root}, disabled=("off",))
    assert manager.declared_providers() == {}
    assert "off-acp" not in {e.id for e in _registry(manager).entries()}


def test_config_wins_key_by_key(tmp_path: Path) -> None:
    root = _plugin(
        tmp_path / "agents",
        '[{ id = "mine", label = "Mine", bin = "agent", env = { K = "V" } }]',
    )
    config = {"mine": {"extends": "acp", "label": "Renamed", "command": ["other"], "order": 1}}
    registry = _registry(_manager({"agents": root}), config)
    entry = registry.entries()[0]
    assert (entry.id, entry.label, entry.order) == ("mine", "Renamed", 1)
    provider = registry.usable("mine")
    assert isinstance(provider, AcpProvider)
    assert provider.command() == ["other"]

    disabled = _registry(_manager({"agents": root}), {"mine": {**config["mine"], "enabled": False}})
    with pytest.raises(InvalidParams, match="disabled"):
        disabled.usable("mine")


def test_builtin_ids_are_refused(tmp_path: Path) -> None:
    for builtin in ("claude", "acp", "codex"):
        root = _plugin(
            tmp_path / builtin, f'[{{ id = "{builtin}", label = "Fake", bin = "agent" }}]'
        )
        with pytest.raises(PluginLoadError, match=f"'{builtin}', which is a built-in provider"):
            _manager({"shadow": root})

        lenient = _manager({"shadow": root}, strict=False)
        assert lenient.declared_providers() == {}
        (record,) = [r for r in lenient.records if r.name == "shadow"]
        assert record.loaded
        assert "refused" in (record.error or "")


def test_ids_no_plugin_registers_are_free(tmp_path: Path) -> None:
    # The kernel reserves no provider id of its own: only registered providers' ids are taken.
    root = _plugin(tmp_path / "gemini", '[{ id = "gemini", label = "Gemini", bin = "gemini" }]')
    manager = _manager({"mine": root})
    assert list(manager.declared_providers()) == ["gemini"]
    assert "gemini" not in manager.providers()


def test_hook_registered_and_already_declared_ids_are_refused(tmp_path: Path) -> None:
    hello = tmp_path / "hello"
    write_tree(hello, plugin_files(1, module=f"hello_{uuid.uuid4().hex}"))
    first = _plugin(tmp_path / "first", '[{ id = "twin", label = "First", bin = "agent" }]')
    second = _plugin(
        tmp_path / "second",
        '[{ id = "twin", label = "Second", bin = "agent" },'
        ' { id = "hello", label = "Hello again", bin = "agent" }]',
    )
    plugins = {"a-hello": hello, "b-first": first, "c-second": second}
    with pytest.raises(PluginLoadError, match="'twin', which plugin 'b-first' already declares"):
        _manager(plugins)

    manager = _manager(plugins, strict=False)
    declared = manager.declared_providers()
    assert list(declared) == ["twin"]
    assert declared["twin"].label == "First"
    (record,) = [r for r in manager.records if r.name == "c-second"]
    assert "already declares" in (record.error or "")
    assert "hello" in manager.providers()

    only_hook = _manager({"a-hello": hello, "c-second": second}, strict=False)
    (record,) = [r for r in only_hook.records if r.name == "c-second"]
    assert "'hello', which is plugin 'a-hello''s provider" in (record.error or "")
    assert "hello" not in only_hook.declared_providers()


def test_invalid_manifest_is_a_load_error(tmp_path: Path) -> None:
    root = _plugin(tmp_path / "bad", '[{ id = "Bad Id", label = "x", bin = "agent" }]')
    with pytest.raises(PluginLoadError, match="invalid plugin manifest"):
        _manager({"bad": root})


def test_missing_bin_shows_as_unavailable(tmp_path: Path) -> None:
    import asyncio

    root = _plugin(tmp_path / "gone", '[{ id = "gone-acp", label = "Gone", bin = "agent" }]')
    registry = _registry(_manager({"gone": root}))
    availability = asyncio.run(registry.usable("gone-acp").availability())
    assert availability.status == "unavailable"
    assert os.fspath(root / "node_modules" / ".bin" / "agent") in (availability.reason or "")


def test_derive_problem_names_the_declaring_plugin(tmp_path: Path) -> None:
    root = _plugin(tmp_path / "agents", '[{ id = "orphan", label = "Orphan", bin = "agent" }]')
    manager = _manager({"agents": root})
    declared = {pid: p.config_entry() for pid, p in manager.declared_providers().items()}
    # As if the built-in acp plugin were disabled: nothing to derive from.
    registry = ProviderRegistry({}, dict, declared)
    entry = registry.entry("orphan")
    assert entry.provider is None
    assert entry.problem is not None
    assert entry.problem.startswith("provider orphan (declared by plugin agents) extends 'acp'")
