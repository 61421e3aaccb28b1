"""``paseo store migrate`` through the real CLI, on homes holding records of every kind."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.foreground import foreground_daemon
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    AgentRecord,
    GitPluginSource,
    ManagedProcessRecord,
    NpmPluginSource,
    ProjectRecord,
    ScheduleRecord,
    TimelineEntry,
    WorkspaceRecord,
)
from paseo_store_json import JsonStore
from paseo_store_sqlite import DATABASE_FILE, SqliteStore

from paseo.testing.store_conformance import (
    agent_data,
    iso,
    managed_process_data,
    plugin_source_data,
    project_data,
    schedule_data,
    snapshot,
    timeline_entry_data,
    workspace_data,
)

KINDS = [
    "agents",
    "timelines",
    "schedules",
    "projects",
    "workspaces",
    "labels",
    "push_tokens",
    "managed_processes",
    "plugin_sources",
    "plugin_records",
]

EXPECTED_COUNTS = {
    "agents": 3,
    "timelines": 7,
    "schedules": 2,
    "projects": 4,
    "workspaces": 2,
    "labels": 2,
    "push_tokens": 2,
    "managed_processes": 1,
    "plugin_sources": 2,
    "plugin_records": 3,
}

CONFIG = {
    "version": 1,
    "daemon": {"listen": "127.0.0.1:7777", "mcp": {"enabled": False}},
    "log": {"level": "debug"},
}

A1, A2, A3 = (
    "0c7e9a52-3f1d-4b8e-9a6c-1d2e3f4a5b61",
    "1d8fab63-4a2e-4c9f-8b7d-2e3f4a5b6c72",
    "2e9abc74-5b3f-4dae-9c8e-3f4a5b6c7d83",
)


def _run(coro: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coro, 60)

    return asyncio.run(bounded())


async def _populate(store: Store) -> None:
    for index, agent_id in enumerate((A1, A2, A3)):
        archived = iso(500) if index == 2 else None
        # A2 is in the trash: a migration carries tombstones, so they stay restorable.
        trashed = {"deletedAt": iso(600)} if index == 1 else {}
        await store.agents.insert(
            AgentRecord.model_validate(
                agent_data(agent_id, created_at=iso(index), archivedAt=archived, **trashed)
            )
        )
    await store.timeline.append(
        [TimelineEntry.model_validate(timeline_entry_data(A1, seq)) for seq in range(4)]
    )
    await store.timeline.append(
        [TimelineEntry.model_validate(timeline_entry_data(A3, seq)) for seq in (5, 9, 12)]
    )
    await store.schedules.insert(ScheduleRecord.model_validate(schedule_data(created_at=iso(1))))
    await store.schedules.insert(
        ScheduleRecord.model_validate(schedule_data(created_at=iso(2), status="paused"))
    )
    await store.projects.insert_if_root_free(
        ProjectRecord.model_validate(project_data("prj_00000000000000a1", root="/src/api"))
    )
    await store.projects.insert_if_root_free(
        ProjectRecord.model_validate(project_data("remote:github.com/acme/web", root="/src/web"))
    )
    await store.labels.create("Backend", "sky")
    await store.labels.create("needs review", "orange")
    await store.workspaces.insert(
        WorkspaceRecord.model_validate(
            workspace_data(
                "wks_00000000000000a1",
                project_id="prj_00000000000000a1",
                cwd="/src/api",
                labels=["Backend", "needs review"],
            )
        )
    )
    await store.workspaces.insert(
        WorkspaceRecord.model_validate(
            workspace_data(
                "wks_00000000000000a2",
                project_id="remote:github.com/acme/web",
                cwd="/src/web",
                archived_at=iso(30),
            )
        )
    )
    await store.push_tokens.add("ExponentPushToken[aaaa]")
    await store.push_tokens.add("ExponentPushToken[bbbb]")
    await store.managed_processes.put(ManagedProcessRecord.model_validate(managed_process_data()))
    await store.plugin_sources.put("lint", GitPluginSource.model_validate(plugin_source_data()))
    await store.plugin_sources.put(
        "format", NpmPluginSource.model_validate(plugin_source_data("npm"))
    )
    assert store.plugin_records is not None
    loops = store.plugin_records.collection("loops", "loops")
    await loops.put("1234abcd", {"id": "1234abcd", "status": "running", "iterations": [{}]})
    await loops.put("5678ef01", {"id": "5678ef01", "status": "succeeded", "prompt": "ünï"})
    await store.plugin_records.collection("chat", "rooms").put("r1", {"name": "general"})


def _add_legacy_projects(home: Path) -> None:
    """Projects on an existing project's root, archived and active, as older registries hold
    them (written to the TypeScript layout directly: the store API creates no such project)."""
    path = home / "projects" / "projects.json"
    projects = json.loads(path.read_text())
    projects.insert(1, project_data("prj_00000000000000a2", root="/src/api", archived_at=iso(9)))
    projects.append(project_data("/src/api", root="/src/api", created_at=iso(3)))
    path.write_text(json.dumps(projects, indent=2))


@pytest.fixture
def json_home(paseo_home: Path) -> Path:
    """A home on the json driver holding records of every kind, and a config.json."""
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(json.dumps(CONFIG, indent=2) + "\n")

    async def build() -> None:
        store = JsonStore(paseo_home)
        await store.open()
        try:
            await _populate(store)
        finally:
            await store.close()

    _run(build())
    _add_legacy_projects(paseo_home)
    return paseo_home


async def _snapshot_of(driver: type[Store], home: Path) -> dict[str, Any]:
    store = driver(home)
    await store.open()
    try:
        return await snapshot(store)
    finally:
        await store.close()


def _migrate(run_paseo, home: Path, *args: str, check: bool = True):
    return run_paseo("store", "migrate", "--home", str(home), *args, check=check)


def test_json_to_sqlite_copies_every_kind_and_verifies(json_home: Path, run_paseo) -> None:
    config_before = (json_home / "config.json").read_bytes()
    result = _migrate(run_paseo, json_home, "--from", "json", "--to", "sqlite", "-o", "json")
    report = json.loads(result.stdout)

    assert report["verified"] is True
    assert report["switched"] is False
    assert [kind["kind"] for kind in report["kinds"]] == KINDS
    for kind in report["kinds"]:
        assert kind["verified"], kind
        assert kind["source"] == kind["target"] == EXPECTED_COUNTS[kind["kind"]], kind
    assert (json_home / "config.json").read_bytes() == config_before

    original = _run(_snapshot_of(JsonStore, json_home))
    copied = _run(_snapshot_of(SqliteStore, json_home))
    assert copied == original
    assert len(original["projects"]) == 4  # including the legacy ones sharing a root


def test_table_output_lists_every_kind(json_home: Path, run_paseo) -> None:
    result = _migrate(run_paseo, json_home, "--from", "json", "--to", "sqlite")
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["KIND", "SOURCE", "TARGET", "VERIFIED"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1 : 1 + len(KINDS)]}
    assert rows == {kind: [str(n), str(n), "yes"] for kind, n in EXPECTED_COUNTS.items()}
    assert "verified" in lines[-1]
    assert "--switch" in lines[-1]


def test_switch_selects_the_target_and_keeps_the_rest_of_config(json_home: Path, run_paseo) -> None:
    _migrate(run_paseo, json_home, "--from", "json", "--to", "sqlite", "--switch")
    config = json.loads((json_home / "config.json").read_text())
    assert config == {**CONFIG, "storage": {"driver": "sqlite"}}


def test_a_target_holding_records_is_refused_unless_forced(json_home: Path, run_paseo) -> None:
    _migrate(run_paseo, json_home, "--from", "json", "--to", "sqlite")
    again = _migrate(run_paseo, json_home, "--from", "json", "--to", "sqlite", check=False)
    assert again.returncode == 1
    assert "--force" in again.stderr

    forced = _migrate(
        run_paseo, json_home, "--from", "json", "--to", "sqlite", "--force", "-o", "json"
    )
    report = json.loads(forced.stdout)
    assert report["verified"] is True
    assert report["cleared"] is True
    assert _run(_snapshot_of(SqliteStore, json_home)) == _run(_snapshot_of(JsonStore, json_home))


def test_sqlite_to_json_round_trips(json_home: Path, tmp_path: Path, run_paseo) -> None:
    _migrate(run_paseo, json_home, "--from", "json", "--to", "sqlite")
    # A second home holding only the database: migrate it back to the json layout.
    other = tmp_path / "other-home"
    other.mkdir()
    shutil.copy2(json_home / DATABASE_FILE, other / DATABASE_FILE)
    result = _migrate(run_paseo, other, "--from", "sqlite", "--to", "json", "-o", "json")
    assert json.loads(result.stdout)["verified"] is True
    assert (other / "projects" / "projects.json").is_file()
    assert _run(_snapshot_of(JsonStore, other)) == _run(_snapshot_of(JsonStore, json_home))


def test_a_copy_that_differs_is_reported_and_config_is_left_alone(
    json_home: Path, run_paseo
) -> None:
    # The label contract creates a label from its name and colour only, so a field a newer
    # writer added to a catalog entry cannot be carried over: verification must say so.
    path = json_home / "projects" / "workspace-labels.json"
    labels = json.loads(path.read_text())
    labels[0]["icon"] = "server"
    path.write_text(json.dumps(labels))
    result = _migrate(
        run_paseo,
        json_home,
        "--from",
        "json",
        "--to",
        "sqlite",
        "--switch",
        "-o",
        "json",
        check=False,
    )
    assert result.returncode == 1
    assert "verification failed (labels)" in result.stderr
    report = json.loads(result.stdout)
    failed = {kind["kind"]: kind for kind in report["kinds"] if not kind["verified"]}
    assert list(failed) == ["labels"]
    assert failed["labels"]["mismatches"] == ["0:Backend"]
    assert json.loads((json_home / "config.json").read_text()) == CONFIG


def test_a_record_the_target_refuses_stops_the_copy_with_a_clear_error(
    json_home: Path, run_paseo
) -> None:
    # A damaged catalog repeating a label identity stays readable, but no writer accepts it.
    path = json_home / "projects" / "workspace-labels.json"
    labels = json.loads(path.read_text())
    labels.append({"name": "BACKEND", "color": "red"})
    path.write_text(json.dumps(labels))
    result = _migrate(
        run_paseo, json_home, "--from", "json", "--to", "sqlite", "--switch", check=False
    )
    assert result.returncode == 1
    assert "BACKEND" in result.stderr
    assert "--force" in result.stderr
    assert json.loads((json_home / "config.json").read_text()) == CONFIG


def test_same_or_unknown_driver_is_refused(json_home: Path, run_paseo) -> None:
    same = _migrate(run_paseo, json_home, "--from", "json", "--to", "json", check=False)
    assert same.returncode == 1
    assert "both" in same.stderr
    unknown = _migrate(run_paseo, json_home, "--from", "json", "--to", "nope", check=False)
    assert unknown.returncode == 1
    assert "nope" in unknown.stderr
    assert "sqlite" in unknown.stderr  # names the installed choices
    assert not (json_home / DATABASE_FILE).exists()


@pytest.fixture
def running_daemon(json_home: Path) -> Iterator[subprocess.Popen[str]]:
    env = {"PASEO_HOME": str(json_home), "PASEO_LISTEN": "127.0.0.1:0"}
    with foreground_daemon(json_home, env) as process:
        yield process


def test_refused_while_a_daemon_serves_the_home(
    running_daemon: subprocess.Popen[str], json_home: Path, run_paseo
) -> None:
    result = _migrate(
        run_paseo, json_home, "--from", "json", "--to", "sqlite", "--switch", check=False
    )
    assert result.returncode == 1
    assert "daemon" in result.stderr
    assert not (json_home / DATABASE_FILE).exists()
    assert json.loads((json_home / "config.json").read_text()) == CONFIG
    assert running_daemon.poll() is None
