"""A timeline file read as its own index: lines by byte offset, forward and backward, and the
line of a seq found by binary search over the bytes (blocking; run in a worker thread).

Entries are stored with strictly increasing ``seq``, so the file is sorted by seq: a page at any
seq costs a logarithmic number of probes (each a ``pread`` of the line found after a byte offset)
and the lines of the page, whatever the file's length; the newest page is read backward from the
end. Nothing here keeps anything per entry: a million-entry timeline costs no memory to open.

Lines are handed to a ``parse`` callback that returns the entry, or ``None`` for a line that is
blank or invalid (the callback reports an invalid one). A trailing fragment without its newline
(a torn append) is never returned: the scans stop at the last newline before their end.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from paseo_hookspecs.records import TimelineEntry
from paseo_hookspecs.store import QuarantinedFile
from pydantic import ValidationError

from paseo_store_json._core import describe_validation_error
from paseo_store_json._files import quarantine_bytes

log = logging.getLogger("paseo.store.json")

CHUNK = 64 * 1024
"""The first read of a scan; later reads of the same scan double up to :data:`MAX_CHUNK` (a page
of small lines costs one read, a huge line a few)."""

MAX_CHUNK = 4 * 1024 * 1024

PROBE_CHUNK = 4 * 1024
"""The first read of a probe of the seq search: one line, usually."""

PROBE_SPAN = 32 * 1024
"""Below this many bytes between its bounds the seq search scans lines instead of probing."""

Parse = Callable[[int, bytes], TimelineEntry | None]
"""``(offset, line) -> entry``, ``None`` for a blank or invalid line."""


def _pread(fd: int, length: int, offset: int) -> bytes:
    chunks: list[bytes] = []
    while length > 0:
        chunk = os.pread(fd, length, offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
        length -= len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def complete_size(fd: int, size: int) -> int:
    """Where the last complete line of the file's first ``size`` bytes ends."""
    position = size
    chunk = CHUNK
    while position > 0:
        start = max(0, position - chunk)
        block = _pread(fd, position - start, start)
        index = block.rfind(b"\n")
        if index >= 0:
            return start + index + 1
        position = start
        chunk = min(chunk * 2, MAX_CHUNK)
    return 0


def lines_forward(
    fd: int, start: int, end: int, chunk: int = CHUNK
) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` (without its newline) for every complete line from ``start`` (a line's
    first byte) up to ``end``, in file order; the first read is of ``chunk`` bytes."""
    position = start
    line_start = start
    pending = b""
    while position < end:
        data = _pread(fd, min(chunk, end - position), position)
        if not data:
            return
        position += len(data)
        buffer = pending + data if pending else data
        begin = 0
        while (newline := buffer.find(b"\n", begin)) >= 0:
            yield line_start, buffer[begin:newline]
            line_start += newline - begin + 1
            begin = newline + 1
        pending = buffer[begin:]
        chunk = min(chunk * 2, MAX_CHUNK)


def lines_backward(fd: int, start: int, end: int) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for every complete line between ``start`` (a line's first byte) and
    ``end`` (just after a newline), newest first."""
    end = start + complete_size_between(fd, start, end)
    position = end
    carry = b""
    """The bytes from ``position`` to the end of the lines not yet returned (ends in a newline)."""
    chunk = CHUNK
    while position > start:
        length = min(chunk, position - start)
        position -= length
        carry = _pread(fd, length, position) + carry
        chunk = min(chunk * 2, MAX_CHUNK)
        stop = len(carry) - 1  # the newline ending the newest line not yet returned
        while (newline := carry.rfind(b"\n", 0, stop)) >= 0:
            yield position + newline + 1, carry[newline + 1 : stop]
            stop = newline
        if position == start:
            yield start, carry[:stop]
            return
        carry = carry[: stop + 1]


def complete_size_between(fd: int, start: int, end: int) -> int:
    """Bytes from ``start`` to the end of the last complete line before ``end``."""
    if end <= start:
        return 0
    if _pread(fd, 1, end - 1) == b"\n":
        return end - start
    return max(0, complete_size(fd, end) - start)


def _next_line_start(fd: int, position: int, end: int) -> int:
    """The first line starting at or after ``position`` (``end`` when none does)."""
    if position <= 0:
        return 0
    chunk = PROBE_CHUNK
    at = position - 1  # the byte before: a newline there makes ``position`` a line start
    while at < end:
        block = _pread(fd, min(chunk, end - at), at)
        if not block:
            return end
        index = block.find(b"\n")
        if index >= 0:
            return min(end, at + index + 1)
        at += len(block)
        chunk = min(chunk * 2, MAX_CHUNK)
    return end


Probe = tuple[int, int, TimelineEntry]
"""``(offset, length, entry)`` of the first valid line a probe found."""


def _probe(fd: int, position: int, end: int, parse: Parse) -> tuple[int, Probe | None]:
    """The first line starting at or after ``position`` (``end`` when none), and the first valid
    line from there on before ``end`` (``None`` when none is). Usually one ``pread``: the
    newline before the line and the line itself in one :data:`PROBE_CHUNK`."""
    at = max(0, position - 1)
    block = _pread(fd, min(PROBE_CHUNK, end - at), at)
    if position <= 0:
        start, body = 0, 0
    else:
        newline = block.find(b"\n")
        if newline < 0:
            start = _next_line_start(fd, position, end)
            return start, _first_valid(fd, start, end, parse)
        start, body = at + newline + 1, newline + 1
    if start >= end:
        return end, None
    stop = block.find(b"\n", body)
    if stop >= 0:
        entry = parse(start, block[body:stop])
        if entry is not None:
            return start, (start, stop - body, entry)
    return start, _first_valid(fd, start, end, parse)


def _first_valid(fd: int, start: int, end: int, parse: Parse) -> Probe | None:
    for offset, line in lines_forward(fd, start, end, PROBE_CHUNK):
        entry = parse(offset, line)
        if entry is not None:
            return offset, len(line), entry
    return None


def seek_seq(
    fd: int, end: int, seq: int, parse: Parse, *, end_seq: int | None = None
) -> int:
    """The offset of the first valid line, among those before ``end``, whose seq is at least
    ``seq`` (``end`` when none is); then a scan of the last few lines. Invalid lines are passed
    over (``parse`` reports them).

    Entries are of similar sizes and seqs mostly consecutive, so the target's offset is guessed
    by interpolation between the bounds' seqs (``end_seq``: the seq after the last entry) and
    bracketed by two probes :data:`PROBE_SPAN` apart around the guess: a few reads on a cold
    file rather than the twenty of a bisection of a gigabyte. A step that does not halve the
    span is followed by a bisection, so lines of very uneven sizes cost at most twice the
    bisection's probes."""
    low, high = 0, end
    low_seq: int | None = 0 if end_seq is not None else None
    high_seq = end_seq
    # Lines starting before ``low`` have a smaller seq than ``seq`` (or are invalid), and the
    # line at ``low`` has at least ``low_seq``; ``high`` is ``end`` or the start of a valid line
    # whose seq (``high_seq``) is at least ``seq``.
    bisect = False
    while high - low > PROBE_SPAN:
        span = high - low
        bisected = bisect or low_seq is None or high_seq is None or high_seq <= low_seq
        if bisected or low_seq is None or high_seq is None:
            guesses = [(low + high) // 2]
        else:
            fraction = min(1.0, max(0.0, (seq - low_seq) / (high_seq - low_seq)))
            guess = low + int(fraction * span)
            guesses = [guess - PROBE_SPAN // 4, guess + PROBE_SPAN // 4]
        for position in guesses:
            if not low < position < high:
                continue
            start, probe = _probe(fd, position, high, parse)
            if probe is None:
                high, high_seq = start, None  # nothing valid from there on
                continue
            offset, length, entry = probe
            if entry.seq < seq:
                low, low_seq = offset + length + 1, entry.seq + 1
            else:
                high, high_seq = offset, entry.seq
        if high - low >= span:
            if bisected:
                break  # one long line spans the middle: scan what is left
            bisect = True
            continue
        bisect = not bisected and high - low > span // 2
    for offset, line in lines_forward(fd, low, high):
        found = parse(offset, line)
        if found is not None and found.seq >= seq:
            return offset
    return high


Found = tuple[int, bytes, TimelineEntry]
"""``(offset, line, entry)`` of one valid line."""


class TimelineFile:
    """One timeline file open for reading during one worker call (a context manager).

    An invalid complete line (not a valid entry of this agent: a damaged disk, an edit by hand)
    is never served and never stops a read: the first read that meets it copies it to the
    quarantine, logs it and blanks it in place (spaces, same length: the offsets of the other
    lines stay, and a blank line is skipped silently from then on), so it is reported once,
    not at every read of every restart. Blanking is not atomic, but a half-blanked line is
    still invalid: a crash meanwhile has it found again. An entry whose seq is out of order
    (which this store never writes) is skipped and logged, not blanked: which of two
    disordered lines is the wrong one is a guess.
    """

    def __init__(
        self,
        path: Path,
        agent_id: str,
        home: Path,
        reported: set[int],
        quarantined: list[QuarantinedFile],
    ) -> None:
        self.path = path
        self.agent_id = agent_id
        self.home = home
        self.reported = reported
        self.quarantined = quarantined
        self.fd = -1

    def __enter__(self) -> TimelineFile:
        self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        return self

    def __exit__(self, *_exc: object) -> None:
        os.close(self.fd)

    def parse(self, offset: int, line: bytes) -> TimelineEntry | None:
        if not line.strip():
            return None
        try:
            entry = TimelineEntry.model_validate_json(line)
        except ValidationError as exc:
            self._invalid(offset, line, describe_validation_error(exc))
            return None
        if entry.agentId != self.agent_id:
            self._invalid(offset, line, f"an entry of agent {entry.agentId}")
            return None
        return entry

    def _invalid(self, offset: int, line: bytes, why: str) -> None:
        if offset in self.reported:
            return
        self.reported.add(offset)
        reason = f"invalid line at byte {offset}, blanked in place: {why}"
        try:
            self.quarantined.append(quarantine_bytes(self.home, self.path, line + b"\n", reason))
            fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
            try:
                os.pwrite(fd, b" " * len(line), offset)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            # Left as it is: skipped at every read, reported again after a restart.
            log.exception(
                "could not set aside the invalid line at byte %d of %s", offset, self.path
            )

    def _disordered(self, offset: int, seq: int) -> None:
        if offset not in self.reported:
            self.reported.add(offset)
            log.warning(
                "skipped entry seq %d at byte %d of %s: out of order", seq, offset, self.path
            )

    def seek(self, end: int, seq: int, last_seq: int | None = None) -> int:
        """The offset of the first entry with at least ``seq`` (``end`` when none); with the
        seq of the last entry before ``end``, found by interpolation."""
        end_seq = None if last_seq is None else last_seq + 1
        return seek_seq(self.fd, end, seq, self.parse, end_seq=end_seq)

    def forward(self, start: int, end: int, before: int | None, limit: int | None) -> list[Found]:
        """The valid entries from offset ``start`` on, oldest first: up to ``limit`` of them,
        and only those before seq ``before``."""
        found: list[Found] = []
        if limit == 0:
            return found
        for offset, line in lines_forward(self.fd, start, end):
            entry = self.parse(offset, line)
            if entry is None:
                continue
            if found and entry.seq <= found[-1][2].seq:
                self._disordered(offset, entry.seq)
                continue
            if before is not None and entry.seq >= before:
                break
            found.append((offset, line, entry))
            if limit is not None and len(found) >= limit:
                break
        return found

    def backward(self, end: int, after: int | None, limit: int | None) -> list[Found]:
        """The valid entries before offset ``end``, newest first: up to ``limit`` of them, and
        only those after seq ``after``."""
        found: list[Found] = []
        if limit == 0:
            return found
        for offset, line in lines_backward(self.fd, 0, end):
            entry = self.parse(offset, line)
            if entry is None:
                continue
            if found and entry.seq >= found[-1][2].seq:
                self._disordered(offset, entry.seq)
                continue
            if after is not None and entry.seq <= after:
                break
            found.append((offset, line, entry))
            if limit is not None and len(found) >= limit:
                break
        return found
