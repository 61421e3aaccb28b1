"""An npm package whose ``paseo`` manifest declares an ACP provider, installed with the real CLI
and run through the real daemon: the Python ACP test agent answers behind the package's bin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import acp_test_agent

Paseo = Any
"""The ``paseo`` fixture (``conftest.Paseo``): the real CLI on the test's state root."""

PROVIDER_ID = "test-acp"


def _install_test_agent_package(paseo: Paseo, pack: Any, tmp_path: Path) -> Path:
    """Pack and install ``@acme/test-acp``; return the directory the agent keeps sessions in
    (set through the manifest's ``env``, so finding files there proves ``env`` is applied)."""
    state_dir = tmp_path / "agent-state"
    manifest = {
        "providers": [
            {
                "id": PROVIDER_ID,
                "label": "Test ACP agent",
                "bin": "test-acp",
                "env": {acp_test_agent.STATE_DIR_VARIABLE: str(state_dir)},
            }
        ]
    }
    tarball = pack(
        tmp_path,
        name="@acme/test-acp",
        bin_name="test-acp",
        exec_argv=acp_test_agent.command(),
        manifest=manifest,
    )
    installed = paseo.json("plugins", "install", str(tarball))
    assert installed["id"] == "test-acp"
    assert installed["manifest"] == manifest
    return state_dir


def _providers(paseo: Paseo) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in paseo.json("provider", "ls", "--refresh")}


def test_declared_provider_runs_a_turn_and_goes_away_when_disabled(
    paseo: Paseo, pack_npm_package: Any, tmp_path: Path, workdir: Path
) -> None:
    state_dir = _install_test_agent_package(paseo, pack_npm_package, tmp_path)
    info = paseo.json("plugins", "info", "test-acp")
    assert [p["id"] for p in info["providers"]] == [PROVIDER_ID]
    assert info["enabled"] is True

    paseo.start_daemon()
    listed = _providers(paseo)[PROVIDER_ID]
    assert listed["label"] == "Test ACP agent"
    assert listed["extends"] == "acp"
    assert listed["availability"]["status"] == "ready"

    done = paseo.run("run", "--provider", PROVIDER_ID, "--cwd", str(workdir), "hello")
    assert done.stdout == "ok: hello\n"
    assert "finished (idle)" in done.stderr
    assert list(state_dir.glob("*.json")), "the manifest's env did not reach the agent"

    disabled = paseo.json("plugins", "disable", "test-acp")
    assert disabled["restartRequired"] is True
    # A running daemon keeps what it loaded until it restarts.
    assert PROVIDER_ID in _providers(paseo)
    paseo.stop_daemon()
    paseo.start_daemon()
    assert PROVIDER_ID not in _providers(paseo)
    refused = paseo.run("run", "--provider", PROVIDER_ID, "--cwd", str(workdir), "hi", check=False)
    assert refused.returncode != 0
    assert f"unknown provider '{PROVIDER_ID}'" in refused.stderr


def test_config_entry_overrides_the_declared_provider(
    paseo: Paseo, pack_npm_package: Any, tmp_path: Path, workdir: Path
) -> None:
    state_dir = _install_test_agent_package(paseo, pack_npm_package, tmp_path)
    config = paseo.config()
    # config.json validation wants a complete definition (extends, label, command) for an id
    # that is not a built-in provider. It is laid over the declared entry key by key: label,
    # order and command come from config.json, env still from the manifest.
    direct = acp_test_agent.command()
    renamed = {"extends": "acp", "label": "Renamed", "command": direct, "order": 1}
    config["agents"] = {"providers": {PROVIDER_ID: renamed}}
    paseo.write_config(config)

    paseo.start_daemon()
    listed = paseo.json("provider", "ls", "--refresh")
    assert listed[0]["id"] == PROVIDER_ID
    assert listed[0]["label"] == "Renamed"
    assert listed[0]["extends"] == "acp"
    assert listed[0]["availability"]["status"] == "ready"

    done = paseo.run("run", "--provider", PROVIDER_ID, "--cwd", str(workdir), "[[reply:hi]]")
    assert done.stdout == "hi\n"
    assert list(state_dir.glob("*.json")), "the manifest's env was dropped"


def test_declaring_a_builtin_provider_id_is_refused(
    paseo: Paseo, pack_npm_package: Any, tmp_path: Path
) -> None:
    manifest = {"providers": [{"id": "claude", "label": "Not Claude", "bin": "fake-claude"}]}
    expected = "declares provider 'claude', which is a built-in provider; refused"
    tarball = pack_npm_package(
        tmp_path,
        name="fake-claude",
        bin_name="fake-claude",
        exec_argv=acp_test_agent.command(),
        manifest=manifest,
    )
    refused = paseo.run("plugins", "install", str(tarball), check=False)
    assert refused.returncode != 0
    assert expected in refused.stderr
    assert "plugins" not in paseo.config()

    # A directory plugin put in config.json by hand is refused when it loads instead.
    plugin = tmp_path / "hand-made"
    plugin.mkdir()
    (plugin / "hand_made_shim.py").write_text("")
    (plugin / "pyproject.toml").write_text(
        '[project]\nname = "hand-made"\n\n[project.entry-points.paseo]\n'
        'hand-made = "hand_made_shim"\n\n[tool.paseo]\n'
        'providers = [{ id = "claude", label = "Not Claude", bin = "agent" }]\n'
    )
    config = paseo.config()
    config["plugins"] = {"hand-made": {"source": "directory", "path": str(plugin)}}
    paseo.write_config(config)

    strict = paseo.run("plugins", "list", check=False)
    assert strict.returncode != 0
    assert expected in strict.stderr

    lenient = {"PASEO_STRICT_PLUGINS": "0"}
    rows = {r["name"]: r for r in paseo.json("plugins", "list", env=lenient)}
    assert expected in rows["hand-made"]["error"]

    paseo.start_daemon(lenient)
    claude = next(p for p in paseo.json("provider", "ls") if p["id"] == "claude")
    assert claude["label"] == "Claude Code"
    assert claude["extends"] is None
