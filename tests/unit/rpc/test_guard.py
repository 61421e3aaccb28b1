"""The password guard: backoff per client address, bounded tables, its own hash thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from paseo.rpc import guard as guard_module
from paseo.rpc.guard import FREE_FAILURES, MAX_PEERS, PasswordGuard, Throttled


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _wrong() -> bool:
    return False


def test_backoff_starts_after_the_free_failures_and_doubles() -> None:
    clock = _Clock()
    guard = PasswordGuard(clock)

    async def run() -> list[float]:
        for _ in range(FREE_FAILURES):
            assert await guard.check("203.0.113.5", _wrong) is False
        waits = []
        for _ in range(3):
            with pytest.raises(Throttled) as refused:
                await guard.check("203.0.113.5", _wrong)
            waits.append(refused.value.retry_after)
            clock.now += refused.value.retry_after
            assert await guard.check("203.0.113.5", _wrong) is False
        # Another address is not affected by the first one's failures.
        assert await guard.check("198.51.100.7", lambda: True) is True
        return waits

    try:
        assert asyncio.run(run()) == [1.0, 2.0, 4.0]
    finally:
        guard.close()


def test_a_success_or_a_quiet_period_forgets_the_failures() -> None:
    clock = _Clock()
    guard = PasswordGuard(clock)

    async def run() -> None:
        for _ in range(FREE_FAILURES - 1):
            await guard.check("p", _wrong)
        assert await guard.check("p", lambda: True)
        for _ in range(FREE_FAILURES - 1):
            await guard.check("p", _wrong)  # the success reset the count: still free
        for _ in range(FREE_FAILURES):
            await guard.check("q", _wrong)
        with pytest.raises(Throttled):
            await guard.check("q", _wrong)
        clock.now += guard_module.FORGET_AFTER + 1
        assert await guard.check("q", _wrong) is False

    try:
        asyncio.run(run())
    finally:
        guard.close()


def test_the_peer_table_is_bounded() -> None:
    guard = PasswordGuard(_Clock())

    async def run() -> None:
        for index in range(MAX_PEERS + 50):
            await guard.check(f"peer-{index}", lambda: False)

    try:
        asyncio.run(run())
        assert len(guard._peers) == MAX_PEERS
    finally:
        guard.close()


def test_checks_run_on_the_guard_thread_and_waiting_checks_are_bounded() -> None:
    guard = PasswordGuard(_Clock())
    release = threading.Event()
    threads: set[str] = set()

    def blocked() -> bool:
        threads.add(threading.current_thread().name)
        return release.wait(30)

    async def run() -> tuple[int, list[bool]]:
        started = [
            asyncio.ensure_future(guard.check(f"peer-{i}", blocked))
            for i in range(guard_module.MAX_PENDING)
        ]
        await asyncio.sleep(0)  # one loop turn (not a timed wait): every task enters the guard
        refused = 0
        for i in range(5):
            try:
                await guard.check(f"other-{i}", blocked)
            except Throttled:
                refused += 1
        release.set()
        return refused, list(await asyncio.gather(*started))

    try:
        refused, results = asyncio.run(run())
    finally:
        guard.close()
    assert refused == 5
    assert all(results)
    assert {name.split("_")[0] for name in threads} == {"paseo-password"}
