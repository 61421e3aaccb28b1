"""The example bridge (examples/paseo-example-bridge, a plugin on the agent port alone) on a
real daemon with a real Claude Code against the fake model server.

It is loaded as a directory plugin straight from the example's folder (strict plugins on), with
its settings in ``plugins.bridge.settings``. A prompt file becomes an agent whose reply lands
beside it; a file write asks for permission, which appears as ``NAME.permission.json`` and is
answered with ``NAME.answer`` (allowed: the file is written; denied: it is not); an answer
with nothing waiting is reported in ``NAME.error``; a restarted daemon starts no second agent
for a prompt, even without its ``NAME.agent``. ``.ci/example-bridge`` runs the same walk with
the bridge installed from its own directory in a fresh venv.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import PERMISSION_MODES, TURN_TIMEOUT, RealDaemon, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[3]
BRIDGE = REPO / "examples" / "paseo-example-bridge"


def _drop(path: Path, text: str) -> None:
    """Write a file the way a careful client would: whole, by rename."""
    temporary = path.with_name(f".{path.name}.part")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _permission(path: Path) -> dict[str, Any] | None:
    text = _text(path)
    return json.loads(text) if text else None


def test_a_folder_drives_claude_code_through_the_bridge(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    folder, work = tmp_path / "inbox", tmp_path / "work"
    work.mkdir()
    config = {
        "agents": {"providers": {"claude": provider_settings("claude", fake, tmp_path / "p")}},
        "plugins": {
            "bridge": {
                "source": "directory",
                "path": str(BRIDGE),
                "enabled": True,
                "settings": {
                    "folder": str(folder),
                    "cwd": str(work),
                    "provider": "claude",
                    "modeId": PERMISSION_MODES["claude"],
                    "pollSeconds": 0.2,
                },
            }
        },
    }
    (daemon.home / "config.json").write_text(json.dumps(config), encoding="utf-8")
    daemon.start()
    plugins = json.loads(daemon.cli("plugins", "list", "-o", "json").stdout)
    assert [(p["name"], p["error"]) for p in plugins if p["name"] == "bridge"] == [
        ("bridge", None)
    ]
    poll(folder.is_dir, timeout=30, what="the bridge to create its folder")

    # A prompt becomes an agent; its reply is written beside it, its timeline logged.
    _drop(folder / "hello.prompt", "[[reply:hello from the bridge]]")
    poll(
        lambda: _text(folder / "hello.reply") == "hello from the bridge",
        timeout=TURN_TIMEOUT,
        what="hello.reply",
    )
    agent = (_text(folder / "hello.agent") or "").strip()
    record = json.loads(daemon.cli("inspect", agent, "-o", "json").stdout)["agent"]
    assert (record["title"], record["provider"], record["cwd"]) == ("hello", "claude", str(work))
    logged = [json.loads(line) for line in (_text(folder / "hello.log") or "").splitlines()]
    assert logged, "hello.log is empty"
    assert [e["seq"] for e in logged] == sorted(e["seq"] for e in logged)

    # A write asks for permission: the request is a file; "allow" in the answer file lets it.
    _drop(folder / "edit.prompt", "[[write:allowed.txt:allowed-content]]")
    asked = poll(
        lambda: _permission(folder / "edit.permission.json"),
        timeout=TURN_TIMEOUT,
        what="edit.permission.json",
    )
    assert asked["agentId"] == (_text(folder / "edit.agent") or "").strip()
    assert "allowed.txt" in json.dumps(asked["input"])
    _drop(folder / "edit.answer", "allow\n")
    poll((work / "allowed.txt").exists, timeout=TURN_TIMEOUT, what="allowed.txt")
    assert (work / "allowed.txt").read_text().strip() == "allowed-content"
    poll(lambda: _text(folder / "edit.reply"), timeout=TURN_TIMEOUT, what="edit.reply")
    assert not (folder / "edit.answer").exists()
    assert not (folder / "edit.permission.json").exists()

    # Denied, with a reason: nothing is written and the turn ends.
    _drop(folder / "deny.prompt", "[[write:denied.txt:never]]")
    poll(
        lambda: _permission(folder / "deny.permission.json"),
        timeout=TURN_TIMEOUT,
        what="deny.permission.json",
    )
    _drop(folder / "deny.answer", "deny not this file")
    poll(lambda: _text(folder / "deny.reply"), timeout=TURN_TIMEOUT, what="deny.reply")
    assert not (work / "denied.txt").exists()
    assert not (folder / "deny.permission.json").exists()
    assert json.loads(daemon.cli("permit", "ls", "-o", "json").stdout) == []

    # An answer with nothing waiting is reported, and consumed.
    _drop(folder / "hello.answer", "allow")
    poll(lambda: _text(folder / "hello.error"), timeout=30, what="hello.error")
    assert "no permission request is waiting" in (_text(folder / "hello.error") or "")
    poll(lambda: not (folder / "hello.answer").exists(), timeout=30, what="hello.answer gone")

    # A restarted daemon finds the bridge's agents by their labels (edit.agent, the other
    # guard, is removed): no prompt starts twice.
    assert daemon.stop().returncode == 0
    (folder / "edit.agent").unlink()
    daemon.start()
    _drop(folder / "later.prompt", "[[reply:after the restart]]")
    poll(
        lambda: _text(folder / "later.reply") == "after the restart",
        timeout=TURN_TIMEOUT,
        what="later.reply",
    )
    listed = json.loads(daemon.cli("ls", "-a", "-o", "json").stdout)
    titles = sorted(a["title"] for a in listed)
    assert titles == ["deny", "edit", "hello", "later"], titles
