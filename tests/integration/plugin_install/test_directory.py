"""Directory plugin sources: used in place, never copied, never deleted."""

from __future__ import annotations

from pathlib import Path

from helpers.plugin_sources import plugin_files, write_tree


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_directory_plugin_is_used_in_place_and_survives_remove(cli, tmp_path: Path) -> None:
    source = tmp_path / "my-plugin"
    write_tree(source, plugin_files(1))
    before = _snapshot(source)

    installed = cli.json("plugins", "install", str(source), "--id", "mine")
    assert installed["kind"] == "directory"
    assert installed["path"] == str(source.resolve())
    assert installed["providers"] == ["hello"]
    assert cli.config()["plugins"]["mine"] == {
        "source": "directory",
        "path": str(source.resolve()),
        "enabled": True,
    }
    # Nothing is copied and nothing is recorded as acquired.
    assert not (cli.home / "plugins" / "mine").exists()
    assert cli.sources() == {}
    assert cli.json("plugins", "update", "mine")["action"] == "unchanged"

    removed = cli.json("plugins", "remove", "mine")
    assert removed["kind"] == "directory"
    assert "mine" not in cli.config().get("plugins", {})
    assert _snapshot(source) == before


def test_builtin_cannot_be_removed_but_can_be_disabled(cli) -> None:
    assert "cannot be removed" in cli.fails("plugins", "remove", "websocket")
    assert cli.json("plugins", "disable", "websocket")["enabled"] is False
    assert cli.config()["plugins"]["websocket"] == {"enabled": False}
    assert "no plugin named" in cli.fails("plugins", "enable", "nothing-here")


def test_manifest_flags_are_for_npm_packages(cli, tmp_path: Path) -> None:
    source = tmp_path / "my-plugin"
    write_tree(source, plugin_files(1))
    error = cli.fails("plugins", "install", str(source), "--provider-id", "x", "--bin", "x")
    assert "apply to npm packages" in error
    assert "plugins" not in cli.config()
