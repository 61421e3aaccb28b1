"""The JSON driver's timeline file as its own index: lines read backward and forward, a seq
found by binary search over byte offsets, invalid lines passed over (and set aside once), a
torn tail never read; and a long timeline opened and paged without parsing every entry."""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path

import pytest
from paseo_hookspecs.records import TimelineEntry
from paseo_store_json import JsonStore
from paseo_store_json._timeline_file import (
    CHUNK,
    TimelineFile,
    complete_size,
    lines_backward,
    lines_forward,
)

from paseo.testing.store_conformance import timeline_entry_data

AGENT = "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"


def _line(seq: int, pad: int = 0) -> bytes:
    data = timeline_entry_data(AGENT, seq)
    data["event"]["item"]["text"] += "y" * pad
    return (json.dumps(data, separators=(",", ":")) + "\n").encode()


def _write(path: Path, lines: list[bytes]) -> list[int]:
    """Write ``lines``; the offset of each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    offsets, position = [], 0
    for line in lines:
        offsets.append(position)
        position += len(line)
    path.write_bytes(b"".join(lines))
    return offsets


def _reader(path: Path, quarantined: list | None = None) -> TimelineFile:
    return TimelineFile(path, AGENT, path.parent, set(), [] if quarantined is None else quarantined)


@pytest.mark.parametrize("pad", [0, 3 * CHUNK], ids=["small-lines", "lines-over-a-chunk"])
def test_lines_read_backward_and_forward_are_the_file_lines(tmp_path: Path, pad: int) -> None:
    rng = random.Random(pad)
    lines = [_line(seq, rng.randrange(pad + 1)) for seq in range(1, 400 if not pad else 12)]
    path = tmp_path / "t.jsonl"
    offsets = _write(path, lines)
    expected = [(offset, line[:-1]) for offset, line in zip(offsets, lines, strict=True)]
    fd = os.open(path, os.O_RDONLY)
    try:
        size = path.stat().st_size
        assert list(lines_forward(fd, 0, size)) == expected
        assert list(lines_backward(fd, 0, size)) == expected[::-1]
        # From a line in the middle, to a line in the middle.
        assert list(lines_backward(fd, offsets[2], offsets[-2])) == expected[2:-2][::-1]
        assert list(lines_forward(fd, offsets[3], offsets[-3])) == expected[3:-3]
    finally:
        os.close(fd)


def test_a_torn_tail_is_never_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    whole = [_line(seq) for seq in range(1, 6)]
    _write(path, [*whole, _line(6)[:40]])
    fd = os.open(path, os.O_RDONLY)
    try:
        size = path.stat().st_size
        complete = complete_size(fd, size)
        assert complete == sum(len(line) for line in whole)
        assert next(line for _o, line in lines_backward(fd, 0, size)) == whole[-1][:-1]
        assert len(list(lines_forward(fd, 0, size))) == len(whole)
    finally:
        os.close(fd)


def test_seek_finds_every_seq_by_binary_search(tmp_path: Path) -> None:
    seqs = sorted(random.Random(1).sample(range(1, 100_000), 3000))  # with gaps
    path = tmp_path / "t.jsonl"
    offsets = _write(path, [_line(seq) for seq in seqs])
    size = path.stat().st_size
    parsed = []
    reader = _reader(path)
    original = reader.parse

    def counting(offset: int, line: bytes) -> TimelineEntry | None:
        parsed.append(offset)
        return original(offset, line)

    reader.parse = counting  # type: ignore[method-assign]
    with reader:
        # Bisection, and interpolation (knowing the last seq) with its bisection fallback.
        for last in (None, seqs[-1]):
            for index in (0, 1, 1234, 2998, 2999):
                parsed.clear()
                assert reader.seek(size, seqs[index], last) == offsets[index]
                assert reader.seek(size, seqs[index] + 1, last) == (
                    offsets[index + 1] if index + 1 < len(seqs) else size
                )
                assert len(parsed) < 200, "a search, not a scan"
            assert reader.seek(size, 0, last) == 0
            assert reader.seek(size, 10**9, last) == size


def test_a_corrupt_middle_line_is_passed_over_and_set_aside_once(tmp_path: Path) -> None:
    lines = [_line(seq) for seq in range(1, 2001)]
    lines[1000] = b'{"agentId": "' + AGENT.encode() + b'", "seq": 1001, "ep\n'  # torn by a disk
    path = tmp_path / "timelines" / f"{AGENT}.jsonl"
    offsets = _write(path, lines)
    size = path.stat().st_size
    quarantined: list = []
    with _reader(path, quarantined) as reader:
        assert reader.seek(size, 1001) == offsets[1001]  # the next valid line, seq 1002
        found = reader.forward(offsets[998], size, None, 4)
        assert [entry.seq for _o, _l, entry in found] == [999, 1000, 1002, 1003]
        back = reader.backward(offsets[1003], None, 3)
        assert [entry.seq for _o, _l, entry in back] == [1003, 1002, 1000]
    [record] = quarantined
    assert Path(record.moved_to).read_bytes() == lines[1000]
    assert f"byte {offsets[1000]}" in record.reason
    # Blanked in place: every other line keeps its offset, and nothing is reported again.
    assert path.stat().st_size == size
    assert path.read_bytes()[offsets[1000] : offsets[1001]].strip() == b""
    again: list = []
    with _reader(path, again) as reader:
        assert [e.seq for _o, _l, e in reader.forward(offsets[999], size, None, 2)] == [1000, 1002]
    assert again == []


def test_an_entry_of_another_agent_or_out_of_order_is_skipped(tmp_path: Path) -> None:
    other = _line(5).replace(AGENT.encode(), b"7c2d9a10-1b2c-4d3e-8f40-000000000001")
    path = tmp_path / "timelines" / f"{AGENT}.jsonl"
    _write(path, [_line(1), _line(2), other, _line(4), _line(3), _line(6)])
    quarantined: list = []
    with _reader(path, quarantined) as reader:
        size = path.stat().st_size
        assert [e.seq for _o, _l, e in reader.forward(0, size, None, None)] == [1, 2, 4, 6]
    assert len(quarantined) == 1  # the other agent's line; a disordered one is only skipped


LONG = 30_000


def test_a_long_timeline_opens_and_pages_without_parsing_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "timelines" / f"{AGENT}.jsonl"
    _write(path, [_line(seq) for seq in range(1, LONG + 1)])
    parsed = [0]
    original = TimelineFile.parse

    def counting(self: TimelineFile, offset: int, line: bytes) -> TimelineEntry | None:
        parsed[0] += 1
        return original(self, offset, line)

    monkeypatch.setattr(TimelineFile, "parse", counting)

    async def scenario() -> None:
        store = JsonStore(tmp_path)
        await store.open()
        try:
            last = await store.timeline.last(AGENT)
            assert last is not None
            assert last.seq == LONG
            page = await store.timeline.read(AGENT, limit=200, tail=True)
            assert [e.seq for e in page] == list(range(LONG - 199, LONG + 1))
            for seq in random.Random(3).sample(range(1, LONG), 10):
                after = await store.timeline.read(AGENT, after_seq=seq, limit=100)
                assert [e.seq for e in after] == list(range(seq + 1, min(LONG, seq + 100) + 1))
                before = await store.timeline.read(AGENT, before_seq=seq, limit=100, tail=True)
                assert [e.seq for e in before] == list(range(max(1, seq - 100), seq))
            assert await store.timeline.stored(AGENT, "ep-1", 12_345)
            await store.timeline.append([TimelineEntry.model_validate_json(_line(LONG + 1))])
            assert (await store.timeline.last(AGENT)).seq == LONG + 1  # type: ignore[union-attr]
        finally:
            await store.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))
    # Pages of 100 and 200 and their searches; the old store parsed all 30,000 at open.
    assert parsed[0] < 6000, parsed[0]


def test_a_page_before_a_seq_read_with_nothing_cached_does_not_hide_the_newer_ones(
    tmp_path: Path,
) -> None:
    """A tail read before a seq, when the timeline has nothing cached (another timeline pushed
    its lines out), must not make its lines the cache's (they do not reach the end): later
    reads still see every newer entry."""
    other = "7c2d9a10-1b2c-4d3e-8f40-000000000001"
    path = tmp_path / "timelines" / f"{AGENT}.jsonl"
    _write(path, [_line(seq) for seq in range(1, 3001)])
    lines = [_line(seq).replace(AGENT.encode(), other.encode()) for seq in range(1, 3001)]
    _write(tmp_path / "timelines" / f"{other}.jsonl", lines)

    async def scenario() -> tuple[list[int], list[int]]:
        # Room for all of one timeline's lines, not for those and the other's first read.
        store = JsonStore(tmp_path, cache_timeline_bytes=path.stat().st_size + 32_000)
        await store.open()
        try:
            await store.timeline.last(AGENT)
            await store.timeline.read(other, limit=3000, tail=True)  # drops AGENT's lines
            page = await store.timeline.read(AGENT, before_seq=100, limit=10, tail=True)
            newest = await store.timeline.read(AGENT, after_seq=2990)
            return [e.seq for e in page], [e.seq for e in newest]
        finally:
            await store.close()

    page, newest = asyncio.run(asyncio.wait_for(scenario(), 60))
    assert page == list(range(90, 100))
    assert newest == list(range(2991, 3001))
