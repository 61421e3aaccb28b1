"""Open-time recovery: leftover temp files, quarantine, torn timeline lines."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from paseo_hookspecs.errors import StorageError
from paseo_hookspecs.records import dump_record
from paseo_store_json import JsonStore

AGENT = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"
OTHER = "c91e4a07-5d2b-4f3a-8e16-7b9d0c4f2a85"


def _open(home: Path) -> JsonStore:
    store = JsonStore(home)
    asyncio.run(store.open())
    return store


def _write(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2))


def test_leftover_temp_files_are_removed_but_not_other_writers(home, make_agent):
    agent_dir = home / "agents" / "Users-alice-code-api"
    _write(agent_dir / f"{AGENT}.json", dump_record(make_agent(AGENT)))
    ours = [
        agent_dir / f".{AGENT}.json.0a1b2c3d4e5f.tmp",
        home / "schedules" / ".0c5d88ae.json.aaaaaaaaaaaa.tmp",
        home / "projects" / ".workspaces.json.bbbbbbbbbbbb.tmp",
        home / ".push-tokens.json.cccccccccccc.tmp",
        home / "plugins" / ".sources.json.dddddddddddd.tmp",
    ]
    foreign = [
        home / ".config.json.eeeeeeeeeeee.tmp",  # the config store's, not ours
        home / "plugins" / "my-plugin" / ".index.js.ffffffffffff.tmp",
    ]
    for path in ours + foreign:
        _write(path, "{half a rec")

    store = _open(home)
    assert [p for p in ours if p.exists()] == []
    assert all(p.exists() for p in foreign)
    assert store.quarantined == []
    assert asyncio.run(store.agents.count()) == 1


def test_corrupt_and_invalid_record_files_are_quarantined_and_the_rest_loads(
    home, make_agent, make_schedule, caplog
):
    good = home / "agents" / "Users-alice-code-api" / f"{AGENT}.json"
    corrupt = home / "agents" / "Users-alice-code-api" / f"{OTHER}.json"
    invalid = home / "schedules" / "0c5d88ae.json"
    _write(good, dump_record(make_agent(AGENT)))
    _write(corrupt, '{"id": "' + OTHER + '", "provider": ')
    bad_schedule = dump_record(make_schedule("0c5d88ae"))
    bad_schedule["status"] = "sleeping"
    _write(invalid, bad_schedule)
    corrupt_bytes, invalid_bytes = corrupt.read_bytes(), invalid.read_bytes()

    with caplog.at_level("WARNING", logger="paseo.store.json"):
        store = _open(home)

    assert asyncio.run(store.agents.count()) == 1
    assert asyncio.run(store.schedules.get("0c5d88ae")) is None
    moved = {Path(q.original): q for q in store.quarantined}
    assert set(moved) == {corrupt, invalid}
    assert "not valid JSON" in moved[corrupt].reason
    assert "status" in moved[invalid].reason
    for original, content in ((corrupt, corrupt_bytes), (invalid, invalid_bytes)):
        target = Path(moved[original].moved_to)
        assert not original.exists()
        assert target.read_bytes() == content
        relative = original.relative_to(home).as_posix()
        assert target.relative_to(home / "quarantine").as_posix().startswith(relative + ".")
        assert str(original) in caplog.text


def test_a_collection_with_invalid_entries_keeps_the_valid_ones_and_the_original(
    home, make_workspace
):
    path = home / "projects" / "workspaces.json"
    good = dump_record(make_workspace("wks_0000000000000001"))
    broken = {**dump_record(make_workspace("wks_0000000000000002")), "kind": "submarine"}
    _write(path, [good, broken])
    original = path.read_bytes()

    store = _open(home)
    page = asyncio.run(store.workspaces.list())
    assert [w.workspaceId for w in page.items] == ["wks_0000000000000001"]
    # Untouched until the next write, and already preserved in quarantine.
    assert path.read_bytes() == original
    [entry] = store.quarantined
    assert entry.original == str(path)
    assert Path(entry.moved_to).read_bytes() == original
    assert "1 invalid entries" in entry.reason

    asyncio.run(store.workspaces.update("wks_0000000000000001", {"title": "T"}))
    rewritten = json.loads(path.read_bytes())
    assert [w["workspaceId"] for w in rewritten] == ["wks_0000000000000001"]
    assert Path(entry.moved_to).read_bytes() == original


def test_a_collection_file_that_is_not_json_is_moved_aside(home, make_project):
    path = home / "projects" / "projects.json"
    _write(path, "[{ not json")
    store = _open(home)
    assert asyncio.run(store.projects.list()).items == []
    [entry] = store.quarantined
    assert not path.exists()
    assert Path(entry.moved_to).read_text() == "[{ not json"
    # A later write starts a fresh registry; the quarantined copy stays.
    asyncio.run(store.projects.insert_if_root_free(make_project("prj_0000000000000001", "/a")))
    assert len(json.loads(path.read_bytes())) == 1
    assert Path(entry.moved_to).exists()


def test_two_files_for_one_agent_keep_the_canonical_one(home, make_agent):
    canonical = home / "agents" / "new-place" / f"{AGENT}.json"
    stale = home / "agents" / "old-place" / f"{AGENT}.json"
    _write(canonical, dump_record(make_agent(AGENT, cwd="/new/place", title="new")))
    _write(stale, dump_record(make_agent(AGENT, cwd="/somewhere/else", title="old")))
    store = _open(home)
    agent = asyncio.run(store.agents.get(AGENT))
    assert agent is not None
    assert agent.title == "new"
    [entry] = store.quarantined
    assert entry.original == str(stale)
    assert "duplicate" in entry.reason
    assert not stale.exists()


def test_a_torn_trailing_timeline_line_is_cut_at_open(home, make_entry):
    path = home / "timelines" / f"{AGENT}.jsonl"
    lines = [json.dumps(dump_record(make_entry(AGENT, seq))) + "\n" for seq in (1, 2)]
    torn = json.dumps(dump_record(make_entry(AGENT, 3)))[:25]
    _write(path, "".join(lines) + torn)

    store = _open(home)
    assert path.read_text() == "".join(lines)
    assert [e.seq for e in asyncio.run(store.timeline.read(AGENT))] == [1, 2]
    asyncio.run(store.timeline.append([make_entry(AGENT, 3)]))
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()] == [1, 2, 3]
    assert store.quarantined == []


def test_only_torn_timelines_are_touched_at_open(home, make_entry):
    """Among many timelines, the torn ones are found by their last byte and cut; whole ones,
    empty ones and one whose torn line is its only line keep their bytes or lose just that."""
    other = "7c2d9a10-1b2c-4d3e-8f40-000000000001"
    whole = json.dumps(dump_record(make_entry(AGENT, 1))) + "\n"
    paths = {name: home / "timelines" / f"{name}.jsonl" for name in ("whole", "empty", "torn")}
    _write(paths["whole"], whole * 3)
    _write(paths["empty"], "")
    _write(paths["torn"], json.dumps(dump_record(make_entry(other, 1)))[:30])
    for index in range(300):
        _write(home / "timelines" / f"bulk-{index}.jsonl", whole)

    _open(home)
    assert paths["whole"].read_text() == whole * 3
    assert paths["empty"].read_bytes() == b""
    assert paths["torn"].read_bytes() == b""
    assert all(
        (home / "timelines" / f"bulk-{index}.jsonl").read_text() == whole for index in range(300)
    )


def test_a_corrupt_timeline_line_in_the_middle_is_quarantined(home, make_entry):
    """The first read that meets it copies the line to the quarantine and blanks it in place
    (the other lines keep their offsets); it is never served, and not reported again."""
    path = home / "timelines" / f"{AGENT}.jsonl"
    good = [json.dumps(dump_record(make_entry(AGENT, seq))) + "\n" for seq in (1, 3)]
    _write(path, good[0] + "garbage line\n" + good[1])
    size = path.stat().st_size

    store = _open(home)
    assert [e.seq for e in asyncio.run(store.timeline.read(AGENT))] == [1, 3]
    [entry] = store.quarantined
    assert Path(entry.moved_to).read_bytes() == b"garbage line\n"
    assert f"byte {len(good[0])}" in entry.reason
    assert path.read_text() == good[0] + " " * len("garbage line") + "\n" + good[1]
    assert path.stat().st_size == size

    reopened = _open(home)
    assert [e.seq for e in asyncio.run(reopened.timeline.read(AGENT))] == [1, 3]
    assert reopened.quarantined == []


def test_an_unreadable_label_transaction_refuses_to_open(home):
    _write(home / "projects" / "workspace-labels.transaction.json", '{"phase": "prep')
    with pytest.raises(StorageError, match="workspace label transaction"):
        _open(home)


def test_a_record_that_cannot_be_moved_aside_stops_the_open(home):
    # The quarantine path is taken by a file, so the move cannot happen: refusing to open is
    # the only way not to serve a home with an unaccounted-for record.
    _write(home / "schedules" / "0c5d88ae.json", "not json")
    _write(home / "quarantine", "in the way")
    with pytest.raises(StorageError):
        _open(home)
    assert (home / "schedules" / "0c5d88ae.json").exists()
