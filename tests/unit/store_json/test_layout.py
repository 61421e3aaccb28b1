"""The json store writes exactly the data model's layout and loads a TypeScript-written home."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from paseo_hookspecs.records import (
    AgentRecord,
    GitPluginSource,
    ManagedProcessRecord,
    WorkspacesFile,
    dump_record,
    sanitize_cwd,
)
from paseo_hookspecs.store import AgentFilter
from paseo_store_json import JsonStore

FIXTURE_HOME = Path(__file__).resolve().parents[2] / "fixtures" / "ts_home"

AGENT_ID = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"


def _json(path: Path) -> Any:
    return json.loads(path.read_bytes())


def _process() -> ManagedProcessRecord:
    return ManagedProcessRecord.model_validate(
        {
            "id": "7c3e9b1d-2a5f-4e80-9d16-b4a2c8f0e573",
            "owner": {"provider": "codex", "kind": "app-server"},
            "pid": 4242,
            "command": "codex",
            "args": ["app-server"],
            "metadata": {},
            "identity": {"commandLine": "codex app-server", "startedAt": None},
            "createdAt": "2026-05-01T10:00:00.000Z",
        }
    )


def test_every_collection_lands_where_the_data_model_says(
    home, make_agent, make_schedule, make_project, make_workspace, make_entry
):
    agent = make_agent(AGENT_ID, cwd="/Users/alice/code/acme-api")
    schedule = make_schedule("0c5d88ae")
    project = make_project("prj_8f3a2b1c9d0e4f57", "/Users/alice/code/acme-api")
    workspace = make_workspace("wks_4c1e9a7b2d6f3e80")
    process = _process()

    async def scenario() -> None:
        store = JsonStore(home)
        await store.open()
        assert await store.agents.insert(agent)
        assert await store.schedules.insert(schedule)
        assert (await store.projects.insert_if_root_free(project))[1]
        assert await store.workspaces.insert(workspace)
        await store.labels.create("  Needs   review ", "sky")
        await store.labels.assign(workspace.workspaceId, ["needs review"], now="2026-05-02T00:00Z")
        assert await store.push_tokens.add("ExponentPushToken[abc]")
        await store.managed_processes.put(process)
        await store.plugin_sources.put(
            "linear-sync", GitPluginSource(remote="https://example.com/p.git")
        )
        await store.timeline.append([make_entry(AGENT_ID, 1), make_entry(AGENT_ID, 2)])
        await store.close()

    asyncio.run(scenario())

    assert _json(home / "agents" / "Users-alice-code-acme-api" / f"{AGENT_ID}.json") == (
        dump_record(agent)
    )
    assert _json(home / "schedules" / "0c5d88ae.json") == dump_record(schedule)
    assert _json(home / "projects" / "projects.json") == [dump_record(project)]
    workspaces = _json(home / "projects" / "workspaces.json")
    assert [w["workspaceId"] for w in workspaces] == [workspace.workspaceId]
    assert workspaces[0]["labels"] == ["Needs review"]
    assert workspaces[0]["updatedAt"] == "2026-05-02T00:00Z"
    assert _json(home / "projects" / "workspace-labels.json") == [
        {"name": "Needs review", "color": "sky"}
    ]
    assert not (home / "projects" / "workspace-labels.transaction.json").exists()
    assert _json(home / "push-tokens.json") == {"tokens": ["ExponentPushToken[abc]"]}
    assert _json(home / "runtime" / "managed-processes" / f"{process.id}.json") == (
        dump_record(process)
    )
    assert _json(home / "plugins" / "sources.json") == {
        "linear-sync": {"kind": "git", "remote": "https://example.com/p.git"}
    }
    lines = (home / "timelines" / f"{AGENT_ID}.jsonl").read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2]
    # Nothing else: no stray temp files, no extra directories.
    files = sorted(p.relative_to(home).as_posix() for p in home.rglob("*") if p.is_file())
    assert files == sorted(
        [
            f"agents/Users-alice-code-acme-api/{AGENT_ID}.json",
            "schedules/0c5d88ae.json",
            "projects/projects.json",
            "projects/workspaces.json",
            "projects/workspace-labels.json",
            "push-tokens.json",
            f"runtime/managed-processes/{process.id}.json",
            "plugins/sources.json",
            f"timelines/{AGENT_ID}.jsonl",
            # Python Paseo's durable agent index (a cache of the records' index rows).
            "index/agents.json",
        ]
    )


def test_moving_an_agents_cwd_moves_its_file(home, make_agent):
    async def scenario() -> None:
        store = JsonStore(home)
        await store.open()
        await store.agents.insert(make_agent(AGENT_ID, cwd="/srv/old"))
        moved = await store.agents.update(AGENT_ID, {"cwd": "C:\\work\\new"})
        assert moved.cwd == "C:\\work\\new"
        await store.close()

    asyncio.run(scenario())
    assert not (home / "agents" / "srv-old" / f"{AGENT_ID}.json").exists()
    assert _json(home / "agents" / sanitize_cwd("C:\\work\\new") / f"{AGENT_ID}.json")["cwd"] == (
        "C:\\work\\new"
    )


def test_unknown_fields_survive_an_update_and_a_reopen(home, make_agent):
    agent = make_agent(AGENT_ID, titleManuallySet=True, owner={"kind": "hub", "id": "h1"})

    async def scenario() -> None:
        store = JsonStore(home)
        await store.open()
        await store.agents.insert(agent)
        await store.agents.update(AGENT_ID, {"title": "Renamed"})
        await store.close()
        again = JsonStore(home)
        await again.open()
        stored = await again.agents.get(AGENT_ID)
        assert stored is not None
        assert dump_record(stored)["owner"] == {"kind": "hub", "id": "h1"}
        assert dump_record(stored)["titleManuallySet"] is True
        assert stored.title == "Renamed"
        await again.close()

    asyncio.run(scenario())


def _build_small_ts_home(target: Path) -> None:
    """A minimal TypeScript-shaped home, used when the shared fixture is absent."""
    agent_dir = target / "agents" / "Users-alice-code-acme-api"
    agent_dir.mkdir(parents=True)
    (agent_dir / f"{AGENT_ID}.json").write_text(
        json.dumps(
            {
                "id": AGENT_ID,
                "provider": "claude",
                "cwd": "/Users/alice/code/acme-api",
                "workspaceId": "wks_4c1e9a7b2d6f3e80",
                "createdAt": "2026-05-01T07:00:00.000Z",
                "updatedAt": "2026-05-01T07:00:00.000Z",
                "title": None,
                "labels": {},
                "lastStatus": "closed",
                "lastError": None,
                "queuedPrompts": [],
            },
            indent=2,
        )
    )
    (target / "projects").mkdir()
    (target / "projects" / "workspaces.json").write_text(
        json.dumps(
            [
                {
                    "workspaceId": "wks_4c1e9a7b2d6f3e80",
                    "projectId": "prj_8f3a2b1c9d0e4f57",
                    "cwd": "/Users/alice/code/acme-api",
                    "kind": "local_checkout",
                    "displayName": "main",
                    "title": None,
                    "branch": "main",
                    "worktreeRoot": "/Users/alice/code/acme-api",
                    "baseBranch": None,
                    "isPaseoOwnedWorktree": False,
                    "mainRepoRoot": None,
                    "createdAt": "2026-05-01T06:58:11.000Z",
                    "updatedAt": "2026-05-06T09:00:00.000Z",
                    "archivedAt": None,
                    "autoArchivedChangeRequestUrl": None,
                    "pinnedAt": None,
                    "labels": ["Backend"],
                }
            ],
            indent=2,
        )
    )
    (target / "projects" / "workspace-labels.json").write_text(
        json.dumps([{"name": "Backend", "color": "sky"}])
    )
    (target / "push-tokens.json").write_text(json.dumps({"tokens": ["ExponentPushToken[a]", 7]}))


def test_a_home_written_by_typescript_paseo_loads_losslessly(tmp_path):
    source = tmp_path / "ts_home_source"
    if FIXTURE_HOME.is_dir():
        shutil.copytree(FIXTURE_HOME, source)
    else:
        _build_small_ts_home(source)
    home = tmp_path / "ts_home"
    shutil.copytree(source, home)
    marker = source / "projects" / "workspace-labels.transaction.json"
    transaction = _json(marker) if marker.exists() else None
    agent_files = sorted((source / "agents").glob("*/*.json"))
    assert agent_files

    async def scenario() -> None:
        store = JsonStore(home)
        await store.open()
        assert store.quarantined == []

        # Every record file loads and re-dumps to exactly what is on disk.
        for path in agent_files:
            record = await store.agents.get(path.stem)
            assert record is not None, path
            assert dump_record(record) == _json(path)
        for path in sorted((source / "schedules").glob("*.json")):
            schedule = await store.schedules.get(path.stem)
            assert schedule is not None
            assert dump_record(schedule) == _json(path)
        for path in sorted((source / "runtime" / "managed-processes").glob("*.json")):
            process = await store.managed_processes.get(path.stem)
            assert process is not None
            assert dump_record(process) == _json(path)
        projects_file = source / "projects" / "projects.json"
        if projects_file.exists():
            page = await store.projects.list(include_archived=True)
            assert [dump_record(p) for p in page.items] == _json(projects_file)

        # Agents are listed in (createdAt, id) order; archived ones only on request.
        every = (await store.agents.list(AgentFilter(include_archived=True))).items
        assert [(a.createdAt, a.id) for a in every] == sorted((a.createdAt, a.id) for a in every)
        assert len(every) == len(agent_files)

        # Push tokens parse permissively: non-string entries are dropped.
        raw_tokens = _json(source / "push-tokens.json")["tokens"]
        assert await store.push_tokens.list() == [t for t in raw_tokens if isinstance(t, str)]

        # A prepared label transaction was rolled back to its before-images before serving.
        if transaction is not None and transaction["phase"] == "prepared":
            assert not (home / "projects" / "workspace-labels.transaction.json").exists()
            catalog = [dump_record(d) for d in await store.labels.list()]
            assert catalog == transaction["beforeLabels"]
            for state in transaction["beforeWorkspaces"]:
                workspace = await store.workspaces.get(state["workspaceId"])
                assert workspace is not None
                assert workspace.labels == state.get("labels")
                assert workspace.updatedAt == state["updatedAt"]
        await store.close()

    asyncio.run(scenario())
    # The registry on disk is still a complete file a TypeScript daemon can read.
    written = WorkspacesFile.model_validate_json(
        (home / "projects" / "workspaces.json").read_bytes()
    )
    assert len(written.root) == len(_json(source / "projects" / "workspaces.json"))


def test_records_from_disk_are_private_copies(home, make_agent):
    async def scenario() -> None:
        store = JsonStore(home)
        await store.open()
        await store.agents.insert(make_agent(AGENT_ID, title="A"))
        got = await store.agents.get(AGENT_ID)
        assert isinstance(got, AgentRecord)
        got.title = "mutated by a caller"
        again = await store.agents.get(AGENT_ID)
        assert again is not None
        assert again.title == "A"
        await store.close()

    asyncio.run(scenario())
