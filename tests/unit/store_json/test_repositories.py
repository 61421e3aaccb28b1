"""Repository semantics specific to the json driver: write failures, uniqueness under
concurrency, compare-and-set, cursors and timelines."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import psutil
import pytest
from paseo_hookspecs.errors import (
    Conflict,
    InvalidParams,
    NotFound,
    StorageError,
    Unavailable,
)
from paseo_hookspecs.records import NpmPluginSource, dump_record
from paseo_hookspecs.store import AgentFilter
from paseo_store_json import JsonStore
from paseo_store_json._files import APPEND_FDS

AGENT = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"


def _agent_ids(n: int) -> list[str]:
    return [f"00000000-0000-4000-8000-{i:012d}" for i in range(n)]


async def _opened(home: Path, ops=None) -> JsonStore:
    store = JsonStore(home, file_ops=ops)
    await store.open()
    return store


def test_a_failed_write_leaves_memory_and_disk_at_the_previous_version(
    home, make_agent, make_workspace, ops
):
    path = home / "agents" / "Users-alice-code-api" / f"{AGENT}.json"

    async def scenario() -> None:
        store = await _opened(home, ops)
        await store.agents.insert(make_agent(AGENT, title="v1"))
        before = path.read_bytes()
        ops.fail("write", path.name)
        with pytest.raises(StorageError, match=r"previous version kept.*No space left"):
            await store.agents.update(AGENT, {"title": "v2"})
        stored = await store.agents.get(AGENT)
        assert stored is not None
        assert stored.title == "v1"
        assert path.read_bytes() == before
        assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp left
        # A failed insert leaves nothing behind either.
        ops.fail("write", "workspaces.json")
        with pytest.raises(StorageError):
            await store.workspaces.insert(make_workspace("wks_0000000000000009"))
        assert await store.workspaces.get("wks_0000000000000009") is None
        assert not (home / "projects" / "workspaces.json").exists()
        await store.close()

    asyncio.run(scenario())


def test_a_failed_move_keeps_the_agent_at_its_old_path(home, make_agent, ops):
    async def scenario() -> None:
        store = await _opened(home, ops)
        await store.agents.insert(make_agent(AGENT, cwd="/old"))
        ops.fail("remove", f"{AGENT}.json")
        with pytest.raises(StorageError):
            await store.agents.update(AGENT, {"cwd": "/new"})
        stored = await store.agents.get(AGENT)
        assert stored is not None
        assert stored.cwd == "/old"
        await store.close()

    asyncio.run(scenario())
    assert (home / "agents" / "old" / f"{AGENT}.json").exists()
    assert not (home / "agents" / "new" / f"{AGENT}.json").exists()


def test_uniqueness_holds_under_concurrent_inserts(home, make_agent, make_project):
    async def scenario() -> None:
        store = await _opened(home)
        results = await asyncio.gather(
            *(store.agents.insert(make_agent(AGENT, title=str(i))) for i in range(10))
        )
        assert sorted(results) == [False] * 9 + [True]
        opened = await asyncio.gather(
            *(
                store.projects.insert_if_root_free(
                    make_project(f"prj_{i:016x}", "/Users/alice/code/api")
                )
                for i in range(10)
            )
        )
        created = [project for project, was_created in opened if was_created]
        assert len(created) == 1
        assert {project.projectId for project, _ in opened} == {created[0].projectId}
        # An archived project does not hold its root.
        await store.projects.update(created[0].projectId, {"archivedAt": "2026-05-02T00:00Z"})
        fresh, was_created = await store.projects.insert_if_root_free(
            make_project("prj_00000000000000ff", "/Users/alice/code/api")
        )
        assert was_created
        assert fresh.projectId == "prj_00000000000000ff"
        with pytest.raises(Conflict):
            await store.projects.insert_if_root_free(
                make_project(created[0].projectId, "/elsewhere")
            )
        await store.close()

    asyncio.run(scenario())


def test_compare_and_set_and_strict_validation(home, make_agent):
    async def scenario() -> None:
        store = await _opened(home)
        await store.agents.insert(make_agent(AGENT, lastStatus="idle"))
        with pytest.raises(Conflict):
            await store.agents.update(AGENT, {"lastStatus": "running"}, expect={"lastStatus": "x"})
        # None matches an absent field; a boolean is not a number.
        updated = await store.agents.update(
            AGENT,
            {"lastStatus": "running", "requiresAttention": True},
            expect={"lastStatus": "idle", "archivedAt": None, "runtimeInfo": None},
        )
        assert updated.lastStatus == "running"
        with pytest.raises(Conflict):
            await store.agents.update(AGENT, {}, expect={"requiresAttention": 1})
        with pytest.raises(InvalidParams):
            await store.agents.update(AGENT, {"lastStatus": "sleeping"})
        with pytest.raises(InvalidParams):
            await store.agents.update(AGENT, {"provider": None})
        with pytest.raises(InvalidParams):
            await store.agents.update(AGENT, {"id": "another"})
        with pytest.raises(InvalidParams):
            await store.agents.update(AGENT, {"title": float("nan")})
        with pytest.raises(NotFound):
            await store.agents.update("missing", {"title": "x"})
        # None removes a may-be-omitted-but-not-null field and nulls a nullable one.
        cleared = await store.agents.update(AGENT, {"requiresAttention": None, "title": None})
        assert "requiresAttention" not in dump_record(cleared)
        assert dump_record(cleared)["title"] is None
        stored = await store.agents.get(AGENT)
        assert stored is not None
        assert stored.lastStatus == "running"
        # A record built without validation is validated on the way in.
        bogus = make_agent(_agent_ids(1)[0]).model_copy(update={"lastStatus": "nope"})
        with pytest.raises(InvalidParams):
            await store.agents.insert(bogus)
        with pytest.raises(InvalidParams):
            await store.agents.insert(make_agent("../escape"))
        await store.close()

    asyncio.run(scenario())


def test_agent_cursor_pages_skip_and_repeat_nothing_across_inserts_and_deletes(home, make_agent):
    ids = _agent_ids(10)

    async def scenario() -> None:
        store = await _opened(home)
        for i, agent_id in enumerate(ids):
            # Two agents share each createdAt, so the id breaks ties.
            await store.agents.insert(
                make_agent(agent_id, createdAt=f"2026-05-01T10:00:0{i // 2}.000Z")
            )
        first = await store.agents.list(limit=4)
        assert [a.id for a in first.items] == ids[:4]
        assert first.next_cursor is not None
        await store.agents.delete(ids[3])  # the cursor's own row
        await store.agents.delete(ids[5])
        await store.agents.insert(make_agent(_agent_ids(11)[10], createdAt="2026-05-01T09:00Z"))
        rest: list[str] = []
        cursor = first.next_cursor
        while cursor is not None:
            page = await store.agents.list(cursor=cursor, limit=3)
            rest += [a.id for a in page.items]
            cursor = page.next_cursor
        assert rest == [ids[4], *ids[6:]]
        for bad in ("garbage!", "", "eyJ4IjoxfQ", first.next_cursor + "x"):
            with pytest.raises(InvalidParams):
                await store.agents.list(cursor=bad)
        schedules_cursor = (await store.schedules.list(limit=1)).next_cursor
        assert schedules_cursor is None
        with pytest.raises(InvalidParams):
            await store.schedules.list(cursor=first.next_cursor)  # another listing's cursor
        with pytest.raises(InvalidParams):
            await store.agents.list(limit=0)
        assert await store.agents.count(AgentFilter(statuses=frozenset({"idle"}))) == 9
        await store.close()

    asyncio.run(scenario())


def test_registry_cursor_is_stable_in_insertion_order(home, make_workspace):
    ids = [f"wks_{i:016x}" for i in range(6)]

    async def scenario() -> None:
        store = await _opened(home)
        for workspace_id in ids:
            await store.workspaces.insert(make_workspace(workspace_id))
        first = await store.workspaces.list(limit=2)
        assert [w.workspaceId for w in first.items] == ids[:2]
        await store.workspaces.delete(ids[1])  # the cursor row
        await store.workspaces.delete(ids[2])
        await store.workspaces.insert(make_workspace("wks_00000000000000aa"))
        second = await store.workspaces.list(cursor=first.next_cursor, limit=10)
        assert [w.workspaceId for w in second.items] == [*ids[3:], "wks_00000000000000aa"]
        assert second.next_cursor is None
        await store.close()
        # After a reopen, a cursor naming an existing row resumes right after it.
        reopened = await _opened(home)
        page = await reopened.workspaces.list(limit=2)
        after = await reopened.workspaces.list(cursor=page.next_cursor)
        assert [w.workspaceId for w in page.items + after.items] == [
            ids[0],
            *ids[3:],
            "wks_00000000000000aa",
        ]
        await reopened.close()

    asyncio.run(scenario())


def test_timeline_append_read_and_ordering(home, make_entry, ops):
    async def scenario() -> None:
        store = await _opened(home, ops)
        await store.timeline.append([make_entry(AGENT, s) for s in (1, 2, 3)])
        with pytest.raises(Conflict):
            await store.timeline.append([make_entry(AGENT, 3)])
        with pytest.raises(Conflict):
            await store.timeline.append([make_entry(AGENT, 5), make_entry(AGENT, 4)])
        with pytest.raises(Conflict):
            await store.timeline.append([make_entry(AGENT, 6), make_entry("other", 7)])
        ops.fail("append", f"{AGENT}.jsonl")
        with pytest.raises(StorageError):
            await store.timeline.append([make_entry(AGENT, 4)])
        await store.timeline.append([make_entry(AGENT, s) for s in (4, 5, 6)])
        read = store.timeline.read
        assert [e.seq for e in await read(AGENT)] == [1, 2, 3, 4, 5, 6]
        assert [e.seq for e in await read(AGENT, after_seq=2, before_seq=6)] == [3, 4, 5]
        assert [e.seq for e in await read(AGENT, limit=2)] == [1, 2]
        assert [e.seq for e in await read(AGENT, limit=2, tail=True)] == [5, 6]
        assert [e.seq for e in await read(AGENT, before_seq=5, limit=2, tail=True)] == [3, 4]
        last = await store.timeline.last(AGENT)
        assert last is not None
        assert last.seq == 6
        assert await store.timeline.last("nobody") is None
        await store.close()
        reopened = await _opened(home)
        assert [e.seq for e in await reopened.timeline.read(AGENT)] == [1, 2, 3, 4, 5, 6]
        await reopened.timeline.delete(AGENT)
        assert await reopened.timeline.read(AGENT) == []
        await reopened.close()

    asyncio.run(scenario())
    assert not (home / "timelines" / f"{AGENT}.jsonl").exists()


def test_timeline_appends_are_written_at_once_and_synced_behind(home, make_entry, ops):
    """An append is in the file when it returns (a killed daemon keeps it); the fsync follows
    in a background round that coalesces appends, ``sync`` waits for it, ``close`` too."""
    path = home / "timelines" / f"{AGENT}.jsonl"

    async def scenario() -> None:
        store = await _opened(home, ops)
        await store.timeline.append([make_entry(AGENT, 1)])
        assert path.read_bytes().count(b"\n") == 1  # written before any fsync ran
        # Two appends of one moment (started in order, so they take the agent's lock in order).
        await asyncio.gather(
            store.timeline.append([make_entry(AGENT, 2)]),
            store.timeline.append([make_entry(AGENT, 3)]),
        )
        await store.timeline.sync()
        syncs = [name for kind, name in ops.calls if kind == "sync"]
        assert set(syncs) == {path.name}
        assert len(syncs) < 3  # the appends of one moment share a round
        # A failed fsync is logged; the entries stay readable and later appends carry on.
        ops.fail("sync", path.name)
        await store.timeline.append([make_entry(AGENT, 4)])
        await store.timeline.sync()
        await store.timeline.append([make_entry(AGENT, 5)])
        appended = len(ops.calls)
        await store.close()
        assert ("sync", path.name) in ops.calls[appended:]  # close forced the last append
        reopened = await _opened(home)
        assert [e.seq for e in await reopened.timeline.read(AGENT)] == [1, 2, 3, 4, 5]
        await reopened.close()

    asyncio.run(scenario())


def test_timeline_files_stay_open_for_appending_bounded_and_closed_on_delete_and_close(
    home, make_entry
):
    """A live timeline's append is one write into a file kept open: at most ``APPEND_FDS`` of
    them (the least recently appended to is closed), none once its timeline is deleted, none
    after ``close``; an evicted or deleted file is opened again by the next append."""
    agents = _agent_ids(APPEND_FDS + 6)
    timelines = home / "timelines"

    def open_timelines() -> set[str]:
        return {
            Path(f.path).name
            for f in psutil.Process().open_files()
            # Open for appending: the background fsync round opens files for reading.
            if Path(f.path).parent == timelines and f.mode == "a"
        }

    async def scenario() -> None:
        store = await _opened(home)
        for agent in agents:
            await store.timeline.append([make_entry(agent, 1)])
        assert open_timelines() == {f"{agent}.jsonl" for agent in agents[-APPEND_FDS:]}
        await store.timeline.append([make_entry(agents[0], 2)])  # evicted: opened again
        assert f"{agents[0]}.jsonl" in open_timelines()
        assert len(open_timelines()) == APPEND_FDS
        await store.timeline.delete(agents[-1])
        assert f"{agents[-1]}.jsonl" not in open_timelines()
        await store.timeline.append([make_entry(agents[-1], 1)])  # a new file, not the old one
        await store.close()
        assert open_timelines() == set()
        reopened = await _opened(home)
        assert [e.seq for e in await reopened.timeline.read(agents[0])] == [1, 2]
        assert [e.seq for e in await reopened.timeline.read(agents[-1])] == [1]
        await reopened.close()

    asyncio.run(scenario())
    assert (timelines / f"{agents[-1]}.jsonl").read_bytes().count(b"\n") == 1


def test_deleting_an_agent_deletes_its_timeline(home, make_agent, make_entry):
    async def scenario() -> None:
        store = await _opened(home)
        await store.agents.insert(make_agent(AGENT))
        await store.timeline.append([make_entry(AGENT, 1)])
        assert await store.agents.delete(AGENT)
        assert not await store.agents.delete(AGENT)
        assert await store.timeline.read(AGENT) == []
        await store.close()

    asyncio.run(scenario())
    assert list(home.rglob(f"{AGENT}*")) == []


def test_schedule_runs_upsert_in_place(home, make_schedule):
    run = {
        "id": "r1",
        "scheduledFor": "2026-05-02T09:00:00.000Z",
        "startedAt": "2026-05-02T09:00:01.000Z",
        "status": "running",
    }

    async def scenario() -> None:
        store = await _opened(home)
        await store.schedules.insert(make_schedule("0c5d88ae"))
        await store.schedules.upsert_run("0c5d88ae", run, {"lastRunAt": run["startedAt"]})
        await store.schedules.upsert_run("0c5d88ae", {**run, "id": "r2"})
        done = await store.schedules.upsert_run(
            "0c5d88ae", {**run, "status": "succeeded", "endedAt": "2026-05-02T09:05:00.000Z"}
        )
        assert [(r.id, r.status) for r in done.runs] == [("r1", "succeeded"), ("r2", "running")]
        assert done.lastRunAt == run["startedAt"]
        with pytest.raises(InvalidParams):
            await store.schedules.upsert_run("0c5d88ae", {**run, "status": "exploded"})
        with pytest.raises(NotFound):
            await store.schedules.upsert_run("ffffffff", run)
        await store.close()

    asyncio.run(scenario())
    stored = json.loads((home / "schedules" / "0c5d88ae.json").read_bytes())
    assert [r["id"] for r in stored["runs"]] == ["r1", "r2"]


def test_push_tokens_and_plugin_sources(home):
    (home / "push-tokens.json").write_text(json.dumps({"tokens": ["a", 1], "future": True}))

    async def scenario() -> None:
        store = await _opened(home)
        assert await store.push_tokens.list() == ["a"]
        assert await store.push_tokens.add("b")
        assert not await store.push_tokens.add("b")
        assert await store.push_tokens.remove("a")
        assert not await store.push_tokens.remove("a")
        await store.plugin_sources.put("pr-reviewer", NpmPluginSource(kind="npm"))
        assert list(await store.plugin_sources.list()) == ["pr-reviewer"]
        assert await store.plugin_sources.delete("pr-reviewer")
        assert not await store.plugin_sources.delete("pr-reviewer")
        await store.close()

    asyncio.run(scenario())
    assert json.loads((home / "push-tokens.json").read_bytes()) == {
        "tokens": ["b"],
        "future": True,
    }
    assert json.loads((home / "plugins" / "sources.json").read_bytes()) == {}


def test_a_closed_store_refuses_work_and_close_is_idempotent(home, make_agent):
    async def scenario() -> None:
        store = JsonStore(home)
        with pytest.raises(Unavailable):
            await store.agents.get(AGENT)
        await store.open()
        await store.close()
        await store.close()
        with pytest.raises(Unavailable):
            await store.agents.insert(make_agent(AGENT))

    asyncio.run(scenario())


def test_a_cancelled_caller_does_not_split_a_write(home, make_agent):
    async def scenario() -> None:
        store = await _opened(home)
        task = asyncio.ensure_future(store.agents.insert(make_agent(AGENT)))
        await asyncio.sleep(0)  # the insert is now running as its own task
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The shielded write still completed and was published to memory.
        assert not await store.agents.insert(make_agent(AGENT))
        assert await store.agents.get(AGENT) is not None
        assert (home / "agents" / "Users-alice-code-api" / f"{AGENT}.json").exists()
        await store.close()

    asyncio.run(scenario())
