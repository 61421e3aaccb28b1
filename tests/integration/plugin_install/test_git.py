"""Git plugin sources through the real CLI: install at a pin, update, a broken update, remove."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from helpers.plugin_sources import GitPluginRepo, plugin_files

PLUGIN = "paseo-hello"


@pytest.fixture
def repo(tmp_path: Path) -> GitPluginRepo:
    return GitPluginRepo(tmp_path / "remote")


def _listed(cli, plugin_id: str = PLUGIN) -> dict:
    rows = [row for row in cli.json("plugins", "list") if row["name"] == plugin_id]
    assert len(rows) == 1, rows
    return rows[0]


def test_install_update_remove(cli, repo: GitPluginRepo) -> None:
    first = repo.commit(plugin_files(1), "first")
    second = repo.commit(plugin_files(2), "second")

    installed = cli.json("plugins", "install", f"{repo.bare}@{first}")
    assert installed["id"] == PLUGIN
    assert installed["kind"] == "git"
    assert installed["revision"] == first
    assert installed["providers"] == ["hello"]
    assert installed["hooks"] == ["paseo_register_providers"]

    row = _listed(cli)
    assert row["version"] == "0.1.0"
    assert row["source"] == "directory"
    assert row["enabled"] is True
    assert row["error"] is None
    assert row["hooks"] == ["paseo_register_providers"]

    # The records are split as the data model says: config.json has the active path and
    # enabled state, sources.json only kind and remote, the revision lives with the checkout.
    entry = cli.config()["plugins"][PLUGIN]
    assert entry == {"source": "directory", "path": installed["path"], "enabled": True}
    assert cli.sources() == {PLUGIN: {"kind": "git", "remote": repo.bare.as_uri()}}
    marker = json.loads((Path(installed["path"]) / ".paseo-install.json").read_text())
    assert marker["revision"] == first

    # A pin stays pinned until --ref moves it.
    assert cli.json("plugins", "update", PLUGIN)["action"] == "unchanged"
    updated = cli.json("plugins", "update", PLUGIN, "--ref", "HEAD")
    assert updated["action"] == "updated"
    assert updated["revision"] == second
    assert updated["previousRevision"] == first
    assert cli.versions(PLUGIN) == [Path(updated["path"])]
    assert not Path(installed["path"]).exists()
    assert _listed(cli)["version"] == "0.2.0"

    info = cli.json("plugins", "info", PLUGIN)
    assert info["revision"] == second
    assert info["remote"] == repo.bare.as_uri()
    assert info["managed"] is True

    removed = cli.json("plugins", "remove", PLUGIN)
    assert removed["action"] == "removed"
    assert PLUGIN not in cli.config().get("plugins", {})
    assert PLUGIN not in cli.sources()
    assert not (cli.home / "plugins" / PLUGIN).exists()
    assert all(row["name"] != PLUGIN for row in cli.json("plugins", "list"))


def test_install_at_tag_with_explicit_url(cli, repo: GitPluginRepo) -> None:
    first = repo.commit(plugin_files(1), "first")
    repo.commit(plugin_files(2), "second")
    repo.tag("v1", first)

    installed = cli.json("plugins", "install", f"git+{repo.bare.as_uri()}@v1", "--id", "hello")
    assert installed["id"] == "hello"
    assert installed["revision"] == first
    assert cli.json("plugins", "info", "hello")["ref"] == "v1"


def test_broken_update_leaves_previous_version_active(cli, repo: GitPluginRepo) -> None:
    good = repo.commit(plugin_files(1), "good")
    repo.commit(plugin_files(2, broken=True), "broken")
    installed = cli.json("plugins", "install", f"{repo.bare}@{good}")
    before = cli.config()

    error = cli.fails("plugins", "update", PLUGIN, "--ref", "HEAD")
    assert "paseo_module_that_does_not_exist" in error

    assert cli.config() == before
    assert cli.versions(PLUGIN) == [Path(installed["path"])]
    marker = json.loads((Path(installed["path"]) / ".paseo-install.json").read_text())
    assert marker["revision"] == good
    row = _listed(cli)
    assert row["version"] == "0.1.0"
    assert row["error"] is None
    assert sorted(p.name for p in (cli.home / "plugins").iterdir()) == [
        ".lock",
        PLUGIN,
        "sources.json",
    ]


def test_broken_install_leaves_nothing(cli, repo: GitPluginRepo) -> None:
    repo.commit(plugin_files(1, broken=True), "broken")
    cli.fails("plugins", "install", str(repo.bare))
    assert "plugins" not in cli.config()
    assert cli.sources() == {}
    assert not (cli.home / "plugins" / PLUGIN).exists()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("http://example.invalid/repo.git", "only file://, https://, ssh:// URLs are allowed"),
        ("git://example.invalid/repo.git", "only file://, https://, ssh:// URLs are allowed"),
        ("git@example.invalid:repo.git", "scp-style"),
    ],
)
def test_refused_git_addresses(cli, source: str, message: str) -> None:
    assert message in cli.fails("plugins", "install", source)


def test_plugin_ids_are_checked(cli, repo: GitPluginRepo) -> None:
    repo.commit(plugin_files(1), "first")
    assert "invalid plugin id" in cli.fails("plugins", "install", str(repo.bare), "--id", "Bad_Id")
    assert "built-in" in cli.fails("plugins", "install", str(repo.bare), "--id", "websocket")
    assert "built-in" in cli.fails("plugins", "install", str(repo.bare), "--id", "sqlite")
    shadow = cli.json(
        "plugins", "install", str(repo.bare), "--id", "sqlite", "--allow-builtin-shadow"
    )
    assert shadow["id"] == "sqlite"
    assert "already installed" in cli.fails("plugins", "install", str(repo.bare), "--id", "sqlite")


def test_running_daemon_is_told_to_restart(cli, repo: GitPluginRepo) -> None:
    repo.commit(plugin_files(1), "first")
    # Hold the lock a running daemon holds for its whole life.
    fd = os.open(cli.home / "paseo.pid.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        installed = cli.json("plugins", "install", str(repo.bare), "--disabled")
    finally:
        os.close(fd)
    assert installed["enabled"] is False
    assert installed["restartRequired"] is True
    assert any("paseo daemon restart" in note for note in installed["notes"])
    assert cli.json("plugins", "enable", PLUGIN)["restartRequired"] is False
    assert cli.config()["plugins"][PLUGIN]["enabled"] is True
