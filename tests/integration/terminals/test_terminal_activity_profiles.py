"""Terminal activity drives its workspace's status; ``daemon.terminalProfiles`` rules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.waiting import wait_for
from integration.terminals.support import Terminals
from paseo_hookspecs.errors import InvalidParams, NotFound


def _active(t: Terminals, workspace_id: str) -> bool:
    terminals = t.call("terminal.list", {"workspaceId": workspace_id})["terminals"]
    return any(x["active"] for x in terminals)


def _running(t: Terminals) -> list[str]:
    running: list[str] = t.call("workspace.list", {})["running"]
    return running


def _workspace_events(t: Terminals, workspace_id: str) -> list[bool | None]:
    return [
        params["workspaceActive"]
        for _, params in list(t.events)
        if params["terminal"]["workspaceId"] == workspace_id
    ]


def test_a_working_terminal_makes_its_workspace_running_and_then_not(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon()
    busy = t.workspace(tmp_path / "busy")
    sibling = t.workspace(tmp_path / "sibling")
    terminal_id = t.create(workspaceId=busy)["terminalId"]
    t.create(workspaceId=sibling)
    # The shells' prompts were output too: let both settle first.
    wait_for(lambda: not _active(t, busy) and not _active(t, sibling), 30, "idle terminals")
    t.events.clear()

    t.type(terminal_id, "for i in $(seq 40); do echo tick$i; sleep 0.1; done\r")
    wait_for(lambda: _active(t, busy), 20, "the workspace to turn running")
    assert not _active(t, sibling)
    # The workspace listing's status bucket follows the terminal; the sibling stays idle.
    wait_for(lambda: _running(t) == [busy], 20, "workspace.list to show it running")
    t.wait_line(terminal_id, "tick40")
    wait_for(lambda: not _active(t, busy), 30, "the workspace to settle")
    wait_for(lambda: _running(t) == [], 20, "workspace.list to show it idle again")

    # Each transition was published with the workspace's state; the sibling saw none.
    wait_for(lambda: _workspace_events(t, busy)[-1:] == [False], 10, "the settle event")
    assert True in _workspace_events(t, busy)
    assert _workspace_events(t, sibling) == []


def _profile_ids(t: Terminals) -> list[str]:
    return [p["id"] for p in t.call("terminal.list")["profiles"]]


def _patch(t: Terminals, profiles: list[dict[str, Any]] | None) -> None:
    t.call("config.patch", {"patch": {"daemon": {"terminalProfiles": profiles}}})


def test_absent_profiles_mean_the_shell_and_each_provider_s_own(
    terminal_daemon: Callable[..., Terminals],
) -> None:
    t = terminal_daemon()
    ids = _profile_ids(t)
    assert ids[0] == "shell"
    # The built-in Claude Code and Codex providers offer theirs; the generic ACP one has none.
    assert ids == ["shell", "claude", "codex"]


def test_empty_profiles_mean_none_and_a_list_means_exactly_those(
    terminal_daemon: Callable[..., Terminals], tmp_path: Path
) -> None:
    t = terminal_daemon({"daemon": {"terminalProfiles": []}})
    assert _profile_ids(t) == []
    with pytest.raises(InvalidParams):
        t.create(cwd=str(tmp_path))

    custom = {
        "id": "greeter",
        "name": "Greeter",
        "command": "sh",
        "args": ["-c", "echo hello-{{{prompt}}}; sleep 1000"],
    }
    _patch(t, [custom, {"id": "plain", "name": "Plain", "command": "sh", "args": []}])
    assert _profile_ids(t) == ["greeter", "plain"]
    terminal = t.create(cwd=str(tmp_path), profileId="greeter", prompt="world")
    assert terminal["command"] == ["sh", "-c", "echo hello-world; sleep 1000"]
    t.wait_line(terminal["terminalId"], "hello-world")
    with pytest.raises(NotFound):
        t.create(cwd=str(tmp_path), profileId="shell")

    # Removing the key brings the defaults back.
    _patch(t, None)
    assert _profile_ids(t) == ["shell", "claude", "codex"]
