"""The json driver's plugin records on disk: one 0600 file per record under
``plugin-records/<namespace>/<collection>/``; what an interrupted write or a damaged file
leaves is cleaned up or set aside at the collection's first use, never overwritten."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from paseo_store_json import JsonStore


def _collection(home: Path) -> Path:
    return home / "plugin-records" / "loops" / "loops"


async def _open(home: Path) -> JsonStore:
    store = JsonStore(home)
    await store.open()
    return store


def test_a_record_is_one_private_file(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = await _open(tmp_path)
        try:
            repo = store.plugin_records.collection("loops", "loops")
            stored = await repo.put("1234abcd", {"status": "running", "prompt": "sécret"})
            path = _collection(tmp_path) / "1234abcd.json"
            document = json.loads(path.read_text())
            assert document == {
                "id": "1234abcd",
                "revision": 1,
                "updated": stored.updated,
                "value": {"status": "running", "prompt": "sécret"},
            }
            assert oct(os.stat(path).st_mode & 0o777) == "0o600"
            assert await repo.delete("1234abcd") is True
            assert not path.exists()
        finally:
            await store.close()

    asyncio.run(scenario())


def test_leftovers_are_swept_and_a_damaged_file_is_set_aside(tmp_path: Path) -> None:
    directory = _collection(tmp_path)
    directory.mkdir(parents=True)
    leftover = directory / ".good.json.0123456789ab.tmp"
    leftover.write_text("half a write")
    (directory / "good.json").write_text(
        json.dumps(
            {"id": "good", "revision": 3, "updated": "2026-01-01T00:00:00.000Z", "value": {}}
        )
    )
    (directory / "bad.json").write_text("{not json")
    (directory / "other.json").write_text(
        json.dumps({"id": "not-other", "revision": 1, "updated": "x", "value": {}})
    )
    (directory / "notes.txt").write_text("not a record: left alone")

    async def scenario() -> None:
        store = await _open(tmp_path)
        try:
            assert not leftover.exists()  # swept by open, before any write could land
            assert (directory / "bad.json").exists()  # set aside at the collection's first use
            repo = store.plugin_records.collection("loops", "loops")
            page = await repo.list()
            assert [(r.id, r.revision) for r in page.items] == [("good", 3)]
            assert await repo.get("bad") is None
            # The damaged file's id is free again, and nothing of it was overwritten.
            assert (await repo.put("bad", {"fresh": True})).revision == 1
        finally:
            await store.close()

    asyncio.run(scenario())
    assert (directory / "notes.txt").read_text() == "not a record: left alone"
    quarantined = sorted(
        p.name.split(".json")[0] for p in (tmp_path / "quarantine").rglob("*.json*")
    )
    assert quarantined == ["bad", "other"]
    contents = {p.read_text() for p in (tmp_path / "quarantine").rglob("*.json*")}
    assert "{not json" in contents


def test_close_finishes_a_write_whose_caller_was_cancelled(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = await _open(tmp_path)
        repo = store.plugin_records.collection("loops", "loops")
        write = asyncio.ensure_future(repo.put("late", {"n": 1}))
        await asyncio.sleep(0)  # the write has started: its task holds the collection's lock
        write.cancel()
        await store.close()
        assert (_collection(tmp_path) / "late.json").exists()
        reopened = await _open(tmp_path)
        try:
            record = await reopened.plugin_records.collection("loops", "loops").get("late")
            assert record is not None
            assert record.value == {"n": 1}
        finally:
            await reopened.close()

    asyncio.run(scenario())
