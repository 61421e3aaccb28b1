"""``paseo.client.light`` (the CLI's one-shot calls) against the real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
