"""``workspace_update`` follows the daemon's workspace stream: what another client (this
daemon's own ``paseo`` CLI) does to a workspace reaches a subscribed TypeScript client, once per
change, in the schema's exact shape (every frame is validated by the client)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from paseo_tswire.models import workspace as wm

pytestmark = pytest.mark.e2e


def _updates(client: TsClient, workspace_id: str) -> list[dict[str, Any]]:
    found = []
    for message in client.messages("workspace_update"):
        payload = message["payload"]
        if payload.get("id", payload.get("workspace", {}).get("id")) == workspace_id:
            found.append(payload)
    return found


def test_another_clients_opens_and_archives_reach_the_sidebar(
    ts_daemon: TsDaemon, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    with TsClient(socket_path=ts_daemon.socket_path) as app, TsClient(
        socket_path=ts_daemon.socket_path
    ) as bystander:
        app.hello("cid_stream_app", client_type="mobile")
        bystander.hello("cid_stream_bystander", client_type="mobile")
        listed = app.request(
            "fetch_workspaces_request", "fetch_workspaces_response", subscribe={}
        )
        assert listed["subscriptionId"]

        opened = json.loads(ts_daemon.cli("workspace", "open", str(site), "-o", "json").stdout)
        workspace_id = opened["workspaceId"]
        upsert = app.wait_for(
            lambda m: m["type"] == "workspace_update"
            and m["payload"].get("workspace", {}).get("id") == workspace_id
        )["payload"]
        descriptor = wm.Upsert.model_validate(upsert).workspace
        assert (descriptor.workspaceDirectory, descriptor.status) == (str(site), "done")
        assert (descriptor.projectKind, descriptor.workspaceKind) == ("non_git", "directory")

        ts_daemon.cli("workspace", "rename", workspace_id, "Renamed site")
        renamed = app.wait_for(
            lambda m: m["type"] == "workspace_update"
            and m["payload"].get("workspace", {}).get("name") == "Renamed site"
        )["payload"]
        assert renamed["workspace"]["id"] == workspace_id

        ts_daemon.cli("workspace", "archive", workspace_id)
        removed = app.wait_for(
            lambda m: m["type"] == "workspace_update" and m["payload"].get("kind") == "remove"
        )["payload"]
        assert wm.Remove.model_validate(removed).id == workspace_id

        # One push per change (open, rename, archive), not one per notification behind it.
        assert [u["kind"] for u in _updates(app, workspace_id)] == ["upsert", "upsert", "remove"]
        # A client that never subscribed was sent none (a ping round trip orders the check).
        bystander.request("ping", "pong", clientSentAt=1)
        assert bystander.messages("workspace_update") == []
