"""npm plugin sources: a local package with a declarative ACP provider manifest."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

PROVIDER = {"id": "my-acp", "label": "My ACP agent", "bin": "my-agent", "env": {"MODE": "acp"}}


def _pack(tmp_path: Path, manifest: dict[str, Any] | None, *, name: str = "@acme/my-agent") -> Path:
    """``npm pack`` a package shipping the ``my-agent`` executable; return the tarball."""
    package = tmp_path / "package-src"
    (package / "bin").mkdir(parents=True)
    (package / "bin" / "agent.js").write_text("#!/usr/bin/env node\nconsole.log('acp')\n")
    meta: dict[str, Any] = {"name": name, "version": "1.0.0", "bin": {"my-agent": "bin/agent.js"}}
    if manifest is not None:
        meta["paseo"] = manifest
    (package / "package.json").write_text(json.dumps(meta))
    out = tmp_path / "packed"
    out.mkdir()
    subprocess.run(
        ["npm", "pack", "--pack-destination", str(out)],
        cwd=package,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (tarball,) = out.glob("*.tgz")
    return tarball


def test_install_npm_package_with_manifest(cli, tmp_path: Path) -> None:
    tarball = _pack(tmp_path, {"providers": [PROVIDER]})
    installed = cli.json("plugins", "install", str(tarball))
    assert installed["id"] == "my-agent"
    assert installed["kind"] == "npm"
    assert installed["revision"] == "1.0.0"
    assert installed["manifest"] == {"providers": [PROVIDER]}

    info = cli.json("plugins", "info", "my-agent")
    assert info["package"] == "@acme/my-agent"
    assert info["version"] == "1.0.0"
    assert info["providers"] == [PROVIDER]
    assert cli.sources() == {"my-agent": {"kind": "npm"}}

    # The package, its lockfile and its dependency tree stay inside the version directory.
    (version,) = cli.versions("my-agent")
    assert (version / "package-lock.json").is_file()
    assert (version / "node_modules" / ".bin" / "my-agent").exists()
    assert not (version / ".npm-cache").exists()

    # The daemon's loader accepts it (strict mode is on in tests).
    rows = [row for row in cli.json("plugins", "list") if row["name"] == "my-agent"]
    assert rows[0]["error"] is None
    assert rows[0]["enabled"] is True

    assert cli.json("plugins", "update", "my-agent")["action"] == "unchanged"
    cli.json("plugins", "remove", "my-agent")
    assert not (cli.home / "plugins" / "my-agent").exists()


def test_manifest_from_flags(cli, tmp_path: Path) -> None:
    tarball = _pack(tmp_path, None, name="plain-agent")
    assert "--provider-id" in cli.fails("plugins", "install", str(tarball))
    assert cli.versions("plain-agent") == []

    cli.json(
        "plugins",
        "install",
        str(tarball),
        "--provider-id",
        "plain",
        "--provider-label",
        "Plain",
        "--bin",
        "my-agent",
    )
    info = cli.json("plugins", "info", "plain-agent")
    assert info["providers"] == [{"id": "plain", "label": "Plain", "bin": "my-agent"}]


def test_manifest_naming_a_missing_executable_is_refused(cli, tmp_path: Path) -> None:
    tarball = _pack(tmp_path, {"providers": [{**PROVIDER, "bin": "not-shipped"}]})
    assert "not-shipped" in cli.fails("plugins", "install", str(tarball))
    assert cli.versions("my-agent") == []
    assert "plugins" not in cli.config()


def test_invalid_manifest_is_refused(cli, tmp_path: Path) -> None:
    tarball = _pack(tmp_path, {"providers": [{"id": "Bad Id", "label": "x", "bin": "my-agent"}]})
    assert "invalid plugin manifest" in cli.fails("plugins", "install", str(tarball))


def test_tarball_escaping_its_directory_is_refused(cli, tmp_path: Path) -> None:
    evil = tmp_path / "evil.tgz"
    with tarfile.open(evil, "w:gz") as archive:
        for name, data in (
            ("package/package.json", b'{"name": "evil", "version": "1.0.0"}'),
            ("../evil", b"gotcha"),
        ):
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))

    error = cli.fails("plugins", "install", str(evil))
    assert "'../evil'" in error
    assert not (tmp_path / "evil").exists()
    assert not (cli.home / "evil").exists()
    assert "plugins" not in cli.config()
    leftovers = [p.name for p in (cli.home / "plugins").iterdir()]
    assert leftovers == [".lock"]
