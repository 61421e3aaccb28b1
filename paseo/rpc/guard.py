"""Password checks that guessing cannot turn against the daemon.

bcrypt is slow on purpose, so every guess costs the daemon CPU. :class:`PasswordGuard` keeps
that cost bounded and away from everything else:

* checks run on the guard's own single thread, never on the default executor the store and
  config writes use, so a flood of guesses cannot delay them;
* at most :data:`MAX_PENDING` checks wait or run at a time (beyond: refused at once), and at
  most :data:`MAX_PENDING_PER_PEER` per client address;
* each client address gets :data:`FREE_FAILURES` wrong guesses, then must wait a backoff
  that doubles with every further failure (up to :data:`MAX_BACKOFF`); a success forgets the
  address's failures. The table of addresses holds at most :data:`MAX_PEERS` (the least
  recently seen are forgotten first) and an address is forgotten after :data:`FORGET_AFTER`
  without failures;
* a throttled burst is logged once, when it starts, not once per guess.

The local credential is compared before any of this (:class:`paseo.rpc.trust.Authenticator`):
a local client is never throttled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

log = logging.getLogger("paseo.rpc")

FREE_FAILURES = 5
"""Wrong guesses per client address before the backoff starts."""
BASE_BACKOFF = 1.0
"""Seconds of the first backoff; doubled with every further failure."""
MAX_BACKOFF = 60.0
FORGET_AFTER = 900.0
"""Seconds without a failure after which an address's record is dropped (a new burst)."""
MAX_PEERS = 4096
MAX_PENDING = 16
MAX_PENDING_PER_PEER = 4


class Throttled(Exception):
    """Too many password attempts: refuse now; the client may retry after ``retry_after``."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"retry after {retry_after:.1f}s")
        self.retry_after = retry_after


@dataclass
class _Peer:
    failures: int = 0
    last_failure: float = 0.0
    blocked_until: float = 0.0
    pending: int = 0


class PasswordGuard:
    """See the module docstring. One per RPC server; survives configuration reloads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="paseo-password")
        self._peers: OrderedDict[str, _Peer] = OrderedDict()
        self._pending = 0

    async def check(self, peer: str, verify: Callable[[], bool]) -> bool:
        """Run ``verify`` (a blocking hash check) for ``peer``; raise :class:`Throttled` instead
        when the peer is backing off or too many checks are waiting."""
        now = self._clock()
        record = self._record(peer, now)
        if now < record.blocked_until:
            raise Throttled(record.blocked_until - now)
        if self._pending >= MAX_PENDING or record.pending >= MAX_PENDING_PER_PEER:
            raise Throttled(BASE_BACKOFF)
        self._pending += 1
        record.pending += 1
        try:
            ok = await asyncio.get_running_loop().run_in_executor(self._executor, verify)
        finally:
            self._pending -= 1
            record.pending -= 1
        if ok:
            self._peers.pop(peer, None)
        else:
            self._failed(peer, record)
        return ok

    def _record(self, peer: str, now: float) -> _Peer:
        record = self._peers.get(peer)
        if record is not None and record.pending == 0 and now - record.last_failure > FORGET_AFTER:
            record = None
        if record is None:
            record = _Peer()
            self._peers[peer] = record
            while len(self._peers) > MAX_PEERS:
                self._peers.popitem(last=False)
        self._peers.move_to_end(peer)
        return record

    def _failed(self, peer: str, record: _Peer) -> None:
        now = self._clock()
        record.failures += 1
        record.last_failure = now
        if record.failures < FREE_FAILURES:
            return
        backoff = min(MAX_BACKOFF, BASE_BACKOFF * 2 ** (record.failures - FREE_FAILURES))
        if record.blocked_until == 0.0:  # the burst starts: logged once, not per guess
            log.warning(
                "%d wrong passwords from %s; backing off its password attempts "
                "(up to %.0fs between them)",
                record.failures,
                peer,
                MAX_BACKOFF,
            )
        record.blocked_until = now + backoff

    def close(self) -> None:
        """Stop the hash thread (checks still queued are dropped)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
