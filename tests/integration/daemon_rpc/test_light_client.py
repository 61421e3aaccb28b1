"""``paseo.client.light`` (the CLI's one-shot calls) against the real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from paseo_hookspecs.errors import AccessDenied, InvalidParams

from paseo.client.light import LightClient
from paseo.rpc.errors import DaemonNotRunning, MethodNotFound


def test_calls_answer_raw_results_and_raise_the_matching_errors(daemon: LiveDaemon) -> None:
    with LightClient(home=daemon.home) as client:
        assert client.hello["sessionKind"] == "local"
        assert client.call("server.ping", {"data": "hi"})["data"] == "hi"
        listing = client.call("agent.list", {"limit": 5})
        assert listing["agents"] == []
        with pytest.raises(MethodNotFound):
            client.call("no.such")
        with pytest.raises(InvalidParams) as info:
            client.call("server.ping", {"data": 3})
        assert info.value.data["errors"][0]["path"] == "data"


def test_a_refused_credential_and_a_missing_daemon(daemon: LiveDaemon, tmp_path: Path) -> None:
    with pytest.raises(AccessDenied, match="refused the credentials"):
        LightClient(f"127.0.0.1:{daemon.port}", env={"PASEO_PASSWORD": "wrong"})
    nobody = tmp_path / "nobody-home"
    with pytest.raises(DaemonNotRunning):
        LightClient(home=nobody)


def test_ls_imports_neither_asyncio_nor_pydantic_nor_a_plugin(daemon: LiveDaemon) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from paseo.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        main(['ls'])\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'pluggy','pydantic','stevedore','asyncio','uvloop','orjson'} or m.startswith('paseo_')"
        " and not m.startswith('paseo_hookspecs'))\n"
        "print(json.dumps({'heavy': heavy, 'out': out.getvalue()}))\n"
    )
    env = dict(os.environ, PASEO_HOME=str(daemon.home))
    env.pop("PASEO_HOST", None)
    result = subprocess.run(
        [sys.executable, "-c", "import json\n" + code],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert "ID" in report["out"]
    assert report["heavy"] == []


def test_a_home_whose_daemon_is_not_running_never_reaches_another_homes_daemon(
    daemon: LiveDaemon, tmp_path: Path, run_paseo: Any
) -> None:
    """Issue 27, item 7: ``--home`` of a stopped daemon reached the daemon of another home on
    the address it would use (there the default 127.0.0.1:6767; here the other daemon's port,
    named by this home's config.json) and blamed the credentials."""
    other = tmp_path / "other-home"
    other.mkdir()
    (other / "config.json").write_text(
        json.dumps({"daemon": {"listen": f"127.0.0.1:{daemon.port}"}})
    )
    with pytest.raises(DaemonNotRunning, match=f"not running \\(home {other}\\)"):
        LightClient(home=other)
    for command in (("ls",), ("schedule", "ls")):
        result = run_paseo("--home", str(other), *command)
        assert result.returncode != 0
        assert f"the Paseo daemon is not running (home {other})" in result.stderr
        assert "credentials" not in result.stderr


def test_an_unusable_home_is_named(run_paseo: Any, tmp_path: Path) -> None:
    """Issue 27, 6i: ``paseo --home /dev/null ls`` said "the daemon refused the credentials"."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    for home in ("/dev/null", str(a_file)):
        result = run_paseo("--home", home, "ls")
        assert result.returncode != 0
        assert f"{home} cannot be a Paseo home: not a directory" in result.stderr
        assert "credentials" not in result.stderr
        assert "Traceback" not in result.stderr


LS_MAY_IMPORT = ("paseo.cli", "paseo.client", "paseo.rpc", "paseo_hookspecs")
"""What of Paseo ``paseo ls`` may import, by prefix (and ``paseo`` itself)."""
LS_MAY_NOT_IMPORT = {
    # Slow standard-library corners: websockets' client brought every one of them
    # (importlib.metadata to read its own version; ssl, urllib and email for TLS and proxies).
    "importlib.metadata",
    "ssl",
    "urllib.request",
    "http.client",
    "email",
    "asyncio",
    "concurrent.futures",
    "selectors",
    "hashlib",
    "threading",
    "logging",
    "dataclasses",
    # Paseo's own heavy parts: the home package, config, plugins, the full client.
    "paseo.home",
    "paseo.config",
    "paseo.plugins",
    "paseo.client.client",
    "paseo.client.sync",
}


MODULES_AT_EXIT = (
    "import atexit, json, runpy, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules))))\n"
    "if sys.argv[1:]:\n"
    "    sys.argv[0] = 'paseo'\n"
    "    runpy.run_module('paseo', run_name='__main__', alter_sys=True)\n"
)
"""Runs ``python -m paseo ARGS`` (nothing without ARGS) and writes on stderr, as the process
exits, every module it imported. Not ``-X importtime``: it misses modules imported by
``importlib.import_module``, as the CLI imports each command's module."""


def test_ls_imports_only_the_standard_library_and_the_cli_s_own_modules(
    daemon: LiveDaemon, tmp_path: Path
) -> None:
    """Issue 36, item 4: ``paseo ls``'s start was most of its 0.57 s at a million agents. Its
    imports: no third-party library at all (websockets' client was most of it), no plugin, no
    entry-point scan (importlib.metadata), and of Paseo only the CLI, the light client and the
    address and error types."""
    env = dict(os.environ, PASEO_HOME=str(daemon.home))
    env.pop("PASEO_HOST", None)

    def imported(*args: str) -> tuple[str, set[str]]:
        result = subprocess.run(
            [sys.executable, "-c", MODULES_AT_EXIT, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=True,
            cwd=tmp_path,
        )
        listed = result.stderr.rsplit("\nMODULES ", 1)[1]
        return result.stdout, set(json.loads(listed))

    out, with_ls = imported("ls")
    assert out.startswith("ID  TITLE")
    # What the interpreter imports for nothing (site, the venv's .pth hooks) is not the CLI's.
    modules = with_ls - imported()[1]
    assert "paseo.cli.commands.ls" in modules
    third_party = sorted(
        name
        for name in modules
        if name.split(".")[0] not in sys.stdlib_module_names
        and name != "paseo"
        and not name.startswith(LS_MAY_IMPORT)
    )
    assert third_party == []
    assert sorted(modules & LS_MAY_NOT_IMPORT) == []
