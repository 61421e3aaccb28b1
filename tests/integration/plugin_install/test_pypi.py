"""pypi plugin sources: wheels installed into the daemon's own environment.

The CLI runs from a throw-away virtual environment whose ``.pth`` file adds the shared test
environment's site-packages *after* its own. pip, run by that interpreter, installs into the
throw-away environment only, while Paseo (and pip itself) are still importable from the shared
one and satisfy the plugin's ``paseo`` requirement. So the install is real — the same
``sys.executable -m pip install`` the daemon would run — and the shared environment other tests
use is never modified (asserted at the end). Wheels are served from a local directory with the
index switched off, so nothing touches the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from helpers.plugin_sources import make_wheel, plugin_files

DIST = "paseo-hello-py"
PLUGIN = "hello-py"


def _wheel(wheelhouse: Path, version: str, *, broken: bool = False) -> Path:
    files = plugin_files(
        int(version.split(".", maxsplit=1)[0]), broken=broken, module="paseo_hello_py"
    )
    del files["pyproject.toml"]
    return make_wheel(
        wheelhouse,
        name=DIST,
        version=version,
        files=files,
        entry_points={"paseo": {PLUGIN: "paseo_hello_py.plugin"}},
        requires=("paseo",),
    )


class VenvCli:
    def __init__(self, python: Path, env: dict[str, str]) -> None:
        self.python = python
        self.env = env

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.python), "-m", "paseo", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"paseo {args} exited {result.returncode}\n{result.stderr}")
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "-o", "json").stdout)

    def installed(self) -> str | None:
        code = (
            "import importlib.metadata as m\n"
            f"try: print(m.version({DIST!r}))\n"
            "except m.PackageNotFoundError: print('')\n"
        )
        out = subprocess.run(
            [str(self.python), "-c", code],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.strip()
        return out or None


@pytest.fixture
def venv_cli(cli, tmp_path: Path) -> VenvCli:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    shared = sysconfig.get_paths()["purelib"]
    (Path(purelib) / "_shared_test_env.pth").write_text(
        f"import site; site.addsitedir({shared!r})\n"
    )
    env = {
        **os.environ,
        **cli.env,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(tmp_path / "wheelhouse"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    return VenvCli(python, env)


def test_pypi_install_update_rollback_remove(cli, venv_cli: VenvCli, tmp_path: Path) -> None:
    wheelhouse = tmp_path / "wheelhouse"
    _wheel(wheelhouse, "1.0.0")

    installed = venv_cli.json("plugins", "install", f"pypi:{DIST}")
    assert installed["id"] == PLUGIN
    assert installed["kind"] == "pypi"
    assert installed["revision"] == "1.0.0"
    assert installed["providers"] == ["hello"]
    assert venv_cli.installed() == "1.0.0"
    assert cli.sources() == {PLUGIN: {"kind": "pypi", "remote": DIST}}
    entry = cli.config()["plugins"][PLUGIN]
    assert entry == {"path": installed["path"], "enabled": True}

    rows = [r for r in venv_cli.json("plugins", "list") if r["name"] == PLUGIN]
    assert rows[0]["source"] == "entrypoint"
    assert rows[0]["version"] == "1.0.0"
    assert rows[0]["error"] is None

    _wheel(wheelhouse, "2.0.0")
    updated = venv_cli.json("plugins", "update", PLUGIN)
    assert (updated["action"], updated["revision"]) == ("updated", "2.0.0")
    assert venv_cli.installed() == "2.0.0"
    assert cli.versions(PLUGIN) == [Path(updated["path"])]

    # A broken release is installed to be verified, refused, and the retained 2.0.0 wheel is
    # put back.
    _wheel(wheelhouse, "3.0.0", broken=True)
    failed = venv_cli.run("plugins", "update", PLUGIN, check=False)
    assert failed.returncode != 0
    assert "paseo_module_that_does_not_exist" in failed.stderr
    assert venv_cli.installed() == "2.0.0"
    assert cli.versions(PLUGIN) == [Path(updated["path"])]
    assert cli.config()["plugins"][PLUGIN]["path"] == updated["path"]

    # After a Paseo upgrade, --all re-installs recorded pypi plugins against the new version.
    (wheelhouse / f"{DIST.replace('-', '_')}-3.0.0-py3-none-any.whl").unlink()
    resynced = venv_cli.json("plugins", "update", "--all")
    assert [(r["id"], r["action"], r["revision"]) for r in resynced] == [
        (PLUGIN, "updated", "2.0.0")
    ]

    info = venv_cli.json("plugins", "info", PLUGIN)
    assert (info["kind"], info["version"], info["remote"]) == ("pypi", "2.0.0", DIST)

    venv_cli.json("plugins", "remove", PLUGIN)
    assert venv_cli.installed() is None
    assert PLUGIN not in cli.config().get("plugins", {})
    assert cli.sources() == {}

    # The shared environment never saw the plugin.
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.version(DIST)


def test_pypi_wheel_path_and_id_rules(cli, venv_cli: VenvCli, tmp_path: Path) -> None:
    wheel = make_wheel(
        tmp_path / "other",
        name="paseo-two-points",
        version="1.0.0",
        files={"two_points.py": textwrap.dedent("")},
        entry_points={"paseo": {"a": "two_points", "b": "two_points"}},
    )
    error = venv_cli.run("plugins", "install", str(wheel), check=False).stderr
    assert "exactly one" in error
    assert venv_cli.run("plugins", "list").returncode == 0
    assert cli.sources() == {}
