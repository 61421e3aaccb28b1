"""The installer in-process, with the built-in sources registered on a plugin manager."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import paseo_plugin_sources.plugin as sources_plugin
import pytest
from helpers.plugin_sources import GitPluginRepo, plugin_files, write_tree
from paseo_hookspecs.errors import InvalidParams, NotFound

from paseo.home import HomeLayout
from paseo.plugin_install import PluginInstaller
from paseo.plugins import LoadPolicy, PaseoPluginManager

T = TypeVar("T")


def _run(coro: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, 120)

    return asyncio.run(bounded())


@pytest.fixture
def manager() -> PaseoPluginManager:
    manager = PaseoPluginManager(LoadPolicy(strict=True))
    manager.register(sources_plugin, "plugin-sources", builtin=True)
    return manager


@pytest.fixture
def installer(manager: PaseoPluginManager, paseo_home: Path) -> PluginInstaller:
    return PluginInstaller(HomeLayout(paseo_home), manager.plugin_sources())


def test_the_four_sources_are_registered(manager: PaseoPluginManager) -> None:
    sources = manager.plugin_sources()
    assert sorted(sources) == ["directory", "git", "npm", "pypi"]
    assert sources["git"].matches("git+https://h/r.git")
    assert sources["git"].matches("ssh://git@h/r.git")
    assert not sources["git"].matches("npm:x")
    assert sources["npm"].matches("npm+scripts:x")
    assert sources["pypi"].matches("pypi:x")
    assert sources["directory"].matches("directory:/x")


def test_git_source_refuses_other_schemes(manager: PaseoPluginManager, tmp_path: Path) -> None:
    git = manager.plugin_sources()["git"]
    for url in ("git+http://h/r.git", "git+git://h/r.git", "git+ftp://h/r.git"):
        with pytest.raises(InvalidParams, match="only"):
            _run(git.prepare(url, tmp_path))


def test_unknown_ref_is_reported(installer: PluginInstaller, tmp_path: Path) -> None:
    repo = GitPluginRepo(tmp_path / "remote")
    repo.commit(plugin_files(1), "one")
    with pytest.raises(NotFound, match="no-such-tag"):
        _run(installer.install(f"{repo.bare}@no-such-tag"))
    assert list((installer.layout.root).iterdir()) == [installer.layout.lock]


def test_cleanup_removes_only_what_a_crash_left(
    installer: PluginInstaller, tmp_path: Path, paseo_home: Path
) -> None:
    repo = GitPluginRepo(tmp_path / "remote")
    repo.commit(plugin_files(1), "one")
    installed = _run(installer.install(str(repo.bare)))
    plugins = paseo_home / "plugins"
    active = Path(installed.path or "")

    # What interrupted operations leave behind ...
    stray = plugins / installed.id / uuid.uuid4().hex
    stray.mkdir()
    (stray / "half-cloned").write_text("")
    (plugins / ".staging" / uuid.uuid4().hex).mkdir(parents=True)
    (plugins / ".trash" / uuid.uuid4().hex).mkdir(parents=True)
    (plugins / ".sources.json.0123abcd.tmp").write_text("{")
    ghost = plugins / "ghost" / uuid.uuid4().hex
    ghost.mkdir(parents=True)
    sources = json.loads((plugins / "sources.json").read_text())
    sources["ghost"] = {"kind": "git", "remote": "file:///nowhere"}
    (plugins / "sources.json").write_text(json.dumps(sources))
    # ... and what belongs to the user: a file of theirs, and a plugin directory of their own
    # under plugins/ that config.json points at.
    (plugins / installed.id / "NOTES.txt").write_text("mine")
    own = plugins / "own-plugin"
    write_tree(own, plugin_files(1, module="own_plugin"))
    config = json.loads((paseo_home / "config.json").read_text())
    config["plugins"]["own"] = {"source": "directory", "path": str(own), "enabled": True}
    (paseo_home / "config.json").write_text(json.dumps(config))

    assert _run(installer.update(installed.id)).action == "unchanged"

    assert sorted(p.name for p in plugins.iterdir()) == sorted(
        [".lock", installed.id, "own-plugin", "sources.json"]
    )
    assert {p.name for p in (plugins / installed.id).iterdir()} == {"NOTES.txt", active.name}
    expected = {Path(name).name for name in plugin_files(1, module="own_plugin")}
    assert {p.name for p in own.rglob("*")} == {*expected, "own_plugin"}
    assert sorted(json.loads((plugins / "sources.json").read_text())) == [installed.id]


def test_remove_of_unknown_plugin(installer: PluginInstaller) -> None:
    with pytest.raises(NotFound):
        _run(installer.remove("nothing"))
    with pytest.raises(InvalidParams, match="built in"):
        _run(installer.remove("websocket"))
