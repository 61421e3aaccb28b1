"""Push tokens, managed processes, plugin sources and timeline entries."""

from __future__ import annotations

from typing import Any

import pytest
from paseo_hookspecs.records import (
    GitPluginSource,
    ManagedProcessRecord,
    NpmPluginSource,
    PluginSourcesFile,
    PushTokensFile,
    TimelineEntry,
    dump_record,
)
from pydantic import ValidationError

# -- push tokens ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "tokens"),
    [
        ({"tokens": ["ExponentPushToken[a]", "ExponentPushToken[b]"]}, ["a", "b"]),
        ({"tokens": ["ExponentPushToken[a]", 1, None, {"t": 1}, ["x"], True]}, ["a"]),
        ({"tokens": "ExponentPushToken[a]"}, []),
        ({"tokens": None}, []),
        ({}, []),
    ],
)
def test_push_tokens_are_parsed_permissively(raw: dict[str, Any], tokens: list[str]) -> None:
    parsed = PushTokensFile.model_validate(raw)
    assert parsed.tokens == [f"ExponentPushToken[{t}]" for t in tokens]


def test_push_tokens_round_trip_and_keep_unknown_fields() -> None:
    raw = {"tokens": ["ExponentPushToken[a]"], "version": 2}
    assert dump_record(PushTokensFile.model_validate(raw)) == raw
    assert dump_record(PushTokensFile(tokens=[])) == {"tokens": []}


@pytest.mark.parametrize("raw", [["ExponentPushToken[a]"], "tokens", None])
def test_push_tokens_top_level_must_be_an_object(raw: Any) -> None:
    with pytest.raises(ValidationError):
        PushTokensFile.model_validate(raw)


# -- managed processes ---------------------------------------------------------------------------


def process(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "id": "7c3e9b1d-2a5f-4e80-9d16-b4a2c8f0e573",
        "owner": {"provider": "claude", "kind": "mcp-bridge"},
        "pid": 48213,
        "command": "node",
        "args": ["bridge.js"],
        "metadata": {},
        "identity": {
            "commandLine": "node bridge.js",
            "startedAt": None,
            "startTimeTicks": "91822734",
            "bootId": "b00t",
        },
        "createdAt": "2026-05-06T08:00:02.010Z",
    }
    raw.update(overrides)
    return raw


def test_managed_process_round_trips_with_and_without_daemon() -> None:
    raw = process()
    assert dump_record(ManagedProcessRecord.model_validate(raw)) == raw
    with_daemon = process(
        daemon={
            "instanceId": "inst_1",
            "pid": 47990,
            "identity": {
                "commandLine": None,
                "startedAt": "Wed May  6 10:01:45 2026",
                "startTimeTicks": None,
                "bootId": None,
            },
            "bootId": None,
            "recordedAt": "2026-05-06T08:00:01.224Z",
        }
    )
    assert dump_record(ManagedProcessRecord.model_validate(with_daemon)) == with_daemon


def test_managed_process_defaults_are_written() -> None:
    raw = process(identity={"commandLine": "node bridge.js", "startedAt": None})
    del raw["metadata"]
    dumped = dump_record(ManagedProcessRecord.model_validate(raw))
    assert dumped["metadata"] == {}
    assert dumped["identity"] == {
        "commandLine": "node bridge.js",
        "startedAt": None,
        "startTimeTicks": None,
        "bootId": None,
    }


def test_managed_process_keeps_newer_fields() -> None:
    raw = process(
        lifecycle={"execTransition": "none", "terminationScope": "process"},
        processTree={"bootId": "b00t", "entries": []},
    )
    assert dump_record(ManagedProcessRecord.model_validate(raw)) == raw


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("pid", 0),
        ("pid", "48213"),
        ("id", ""),
        ("command", ""),
        ("args", "bridge.js"),
        ("args", [1]),
        ("owner", {"provider": "claude"}),
        ("owner", {"provider": "", "kind": "x"}),
        ("identity", {"commandLine": "x"}),
        ("daemon", None),
        ("metadata", None),
    ],
)
def test_invalid_managed_process_is_rejected(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        ManagedProcessRecord.model_validate(process(**{field: value}))


# -- plugin sources ------------------------------------------------------------------------------


def test_plugin_source_branches() -> None:
    raw = {
        "linear-sync": {"kind": "git", "remote": "https://github.com/acme/linear.git"},
        "pr-reviewer": {"kind": "npm"},
    }
    parsed = PluginSourcesFile.model_validate(raw)
    assert isinstance(parsed.root["linear-sync"], GitPluginSource)
    assert isinstance(parsed.root["pr-reviewer"], NpmPluginSource)
    assert dump_record(parsed) == raw


def test_plugin_source_without_kind_is_git_and_old_fields_are_kept() -> None:
    legacy = {
        "remote": "git@github.com:acme/linear.git",
        "requestedRef": None,
        "trackingBranch": "main",
        "commit": "0" * 40,
        "pluginPath": ".",
        "checkoutRoot": "/home/a/.paseo/plugins/linear/0000-x/checkout",
    }
    parsed = PluginSourcesFile.model_validate({"linear": legacy})
    source = parsed.root["linear"]
    assert isinstance(source, GitPluginSource)
    assert dump_record(parsed) == {"linear": {"kind": "git", **legacy}}


@pytest.mark.parametrize(
    "source",
    [{}, {"kind": "git"}, {"kind": "git", "remote": ""}, {"kind": "svn", "remote": "x"}, "npm"],
)
def test_invalid_plugin_source_is_rejected(source: Any) -> None:
    with pytest.raises(ValidationError):
        PluginSourcesFile.model_validate({"p": source})


def test_plugin_sources_file_must_be_a_map() -> None:
    with pytest.raises(ValidationError):
        PluginSourcesFile.model_validate([{"kind": "npm"}])


# -- timeline ------------------------------------------------------------------------------------


def entry(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "agentId": "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14",
        "seq": 0,
        "epoch": "ep_01",
        "timestamp": "2026-05-06T14:55:41.902Z",
        "event": {"type": "timeline", "item": {"type": "assistant_message", "text": "Done."}},
    }
    raw.update(overrides)
    return raw


@pytest.mark.parametrize(
    "timestamp",
    ["2026-05-06T14:55:41.902Z", "2026-05-06T14:55:41+02:00", "2026-05-06T14:55:41.902123"],
)
def test_timeline_entry_round_trips(timestamp: str) -> None:
    raw = entry(seq=41, timestamp=timestamp)
    parsed = TimelineEntry.model_validate(raw)
    assert parsed.seq == 41
    assert dump_record(parsed) == raw


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("seq", -1),
        ("seq", 1.0),
        ("seq", "3"),
        ("seq", True),
        ("epoch", ""),
        ("epoch", 3),
        ("timestamp", "yesterday"),
        ("timestamp", 1714810323),
        ("event", "assistant_message"),
        ("event", None),
        ("agentId", ""),
    ],
)
def test_invalid_timeline_entry_is_rejected(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        TimelineEntry.model_validate(entry(**{field: value}))


def test_timeline_entry_keeps_unknown_fields() -> None:
    raw = entry(source="provider")
    assert dump_record(TimelineEntry.model_validate(raw)) == raw
