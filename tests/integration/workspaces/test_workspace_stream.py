"""The ``workspaces`` stream on ``/ws``: another client's workspace changes and the derived
status reach a subscriber, each once, in the schema's shapes."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon, kill_leftover, start_daemon, stop_daemon
from helpers.waiting import wait_for

from paseo.client.sync import SyncClient
from paseo.workspaces.rpc import notifications

MODELS = notifications()


@dataclass
class Watcher:
    """A ``/ws`` client subscribed to ``workspaces``, keeping every notification it got."""

    client: SyncClient
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, method: str, params: dict[str, Any]) -> None:
        MODELS[method].model_validate(params)  # the schema's exact shape
        with self.lock:
            self.events.append((method, params))

    def of(self, workspace_id: str, method: str = "workspace.changed") -> list[dict[str, Any]]:
        with self.lock:
            found = list(self.events)
        return [
            p
            for m, p in found
            if m == method
            and (p.get("workspaceId") or p.get("workspace", {}).get("workspaceId")) == workspace_id
        ]


@pytest.fixture
def watched(paseo_home: Path) -> Iterator[tuple[LiveDaemon, Watcher]]:
    live = start_daemon(paseo_home)
    client = SyncClient(home=paseo_home, client_type="cli", reconnect=False)
    try:
        watcher = Watcher(client)
        for method in MODELS:
            client.on(method, watcher.record)
        # Subscribing works before anything was published: the stream is declared at start.
        client.subscribe(["workspaces"])
        yield live, watcher
    finally:
        with contextlib.suppress(Exception):
            client.close()
        stop_daemon(paseo_home)
        kill_leftover(live.pid)


def test_another_clients_workspace_changes_reach_a_subscriber(
    watched: tuple[LiveDaemon, Watcher], run_paseo: Any, tmp_path: Path
) -> None:
    _, watcher = watched

    def paseo(*args: str) -> Any:
        return json.loads(run_paseo(*args, "-o", "json", check=True).stdout)

    (tmp_path / "site").mkdir()
    workspace_id = paseo("workspace", "open", str(tmp_path / "site"))["workspaceId"]
    wait_for(lambda: len(watcher.of(workspace_id)) == 1, 20, "the open to be announced")
    paseo("workspace", "rename", workspace_id, "Site")
    paseo("workspace", "pin", workspace_id)
    paseo("workspace", "archive", workspace_id)
    paseo("workspace", "restore", workspace_id)
    wait_for(lambda: len(watcher.of(workspace_id)) == 5, 20, "five changes to be announced")

    states = [p["workspace"] for p in watcher.of(workspace_id)]
    assert states[0]["cwd"] == str(tmp_path / "site")
    assert states[1]["title"] == "Site"
    assert states[2]["pinnedAt"] is not None
    assert states[3]["archivedAt"] is not None
    assert states[4]["archivedAt"] is None
    # One stream, numbered densely: nothing was lost in between.
    with watcher.lock:
        seqs = [p["seq"] for _, p in watcher.events]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))


def test_the_derived_status_is_announced_once_per_change(
    watched: tuple[LiveDaemon, Watcher], tmp_path: Path
) -> None:
    _, watcher = watched
    (tmp_path / "busy").mkdir()
    call = watcher.client.call
    workspace_id = call("workspace.open", {"path": str(tmp_path / "busy")})["workspace"][
        "workspaceId"
    ]
    terminal_id = call("terminal.create", {"workspaceId": workspace_id})["terminal"]["terminalId"]

    def statuses() -> list[str]:
        return [p["status"] for p in watcher.of(workspace_id, "workspace.status")]

    # The shell's prompt is output too: running, then idle once it settles.
    wait_for(lambda: statuses() == ["running", "idle"], 30, "the prompt's burst to settle")
    loop = "for i in $(seq 30); do echo tick$i; sleep 0.05; done\r"
    call("terminal.input", {"terminalId": terminal_id, "data": loop})
    # Thirty bursts of output in a row are one change to running and one back.
    wait_for(lambda: len(statuses()) == 4, 30, "the loop's run and settle")
    assert statuses() == ["running", "idle", "running", "idle"]
    assert call("workspace.list", {})["running"] == []
