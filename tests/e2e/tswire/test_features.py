"""Provider features over the TypeScript protocol, with the ``scripted`` test provider (the
built-in providers offer none): listed for a draft, started with the draft's values, set on
the running agent and shown in its snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import poll
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon

from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e

SCRIPTED_PLUGIN = Path(__file__).resolve().parents[2] / "integration" / "agents" / "scripted_agent"


def by_id(features: list[dict[str, Any]]) -> dict[str, Any]:
    return {f["id"]: f for f in features}


def test_features_round_trip(tmp_path: Path, proxy: RefusingProxy) -> None:
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config(plugins={"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    try:
        with TsClient(socket_path=daemon.socket_path) as app:
            app.hello("cid_features")
            listed = app.request(
                "list_provider_features_request",
                "list_provider_features_response",
                draftConfig={
                    "provider": "scripted",
                    "cwd": str(work),
                    "featureValues": {"fast": True},
                },
            )
            assert listed.get("error") is None, listed
            offered = by_id(listed["features"])
            assert offered["fast"] == {
                "type": "toggle",
                "id": "fast",
                "label": "Fast",
                "value": True,
            }
            assert offered["tone"]["type"] == "select"
            assert offered["tone"]["value"] == "plain"
            assert [o["id"] for o in offered["tone"]["options"]] == ["plain", "terse"]
            unknown = app.request(
                "list_provider_features_request",
                "list_provider_features_response",
                draftConfig={"provider": "no-such", "cwd": str(work)},
            )
            assert "no-such" in unknown["error"]
            assert "features" not in unknown

            created = app.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=60,
                config={
                    "provider": "scripted",
                    "cwd": str(work),
                    "featureValues": {"tone": "terse"},
                },
            )
            assert created["status"] == "agent_created", created
            agent_id = created["agent"]["id"]
            # The session starts in the background; its features reach the record when it has.
            started: dict[str, Any] = {}

            def features_known() -> bool:
                started.update(
                    app.request("fetch_agent_request", "fetch_agent_response", agentId=agent_id)
                )
                return "features" in started["agent"]

            poll(features_known, timeout=60, what="the started session's features")
            features = by_id(started["agent"]["features"])
            assert (features["fast"]["value"], features["tone"]["value"]) == (False, "terse")

            answer = app.request(
                "set_agent_feature_request",
                "set_agent_feature_response",
                agentId=agent_id,
                featureId="fast",
                value=True,
            )
            assert (answer["accepted"], answer["error"]) == (True, None)
            after = app.request("fetch_agent_request", "fetch_agent_response", agentId=agent_id)
            assert by_id(after["agent"]["features"])["fast"]["value"] is True
            refused = app.request(
                "set_agent_feature_request",
                "set_agent_feature_response",
                agentId=agent_id,
                featureId="tone",
                value="loud",
            )
            assert refused["accepted"] is False
            assert "tone" in refused["error"]

            # The scripted program reports no slash commands.
            commands = app.request(
                "list_commands_request", "list_commands_response", agentId=agent_id
            )
            assert (commands["commands"], commands["error"]) == ([], None)
    finally:
        daemon.cleanup()
