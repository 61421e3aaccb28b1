"""The real clock's sleep is capped, so a wall-clock jump is noticed within one cap."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from paseo.schedules import clock
from paseo.schedules.clock import SystemClock, iso, parse_iso


def test_a_sleep_toward_a_far_deadline_returns_after_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(clock, "MAX_SLEEP", 0.01)
    real = SystemClock()

    async def body() -> None:
        await real.sleep_until(real.now() + timedelta(days=1), asyncio.Event())

    asyncio.run(asyncio.wait_for(body(), 10))


def test_a_wake_cuts_the_sleep_short() -> None:
    real = SystemClock()

    async def body() -> None:
        wake = asyncio.Event()
        asyncio.get_running_loop().call_soon(wake.set)
        await real.sleep_until(None, wake)

    asyncio.run(asyncio.wait_for(body(), 10))


def test_timestamps_round_trip_in_the_typescript_form() -> None:
    moment = SystemClock().now().replace(microsecond=123000)
    text = iso(moment)
    assert text.endswith("Z")
    assert parse_iso(text) == moment
