"""``LiveAgent.wait_changed``: a waiter cancelled just after the agent changed is cancelled.

``asyncio.wait_for`` on Python 3.11 returns normally when its caller is cancelled after the
awaited event was set but before the caller resumed, and the cancellation is lost. A loop
cancelled by a daemon shutdown while its worker streams (a change every chunk) must stop
waiting, not go on and take the worker's close for the iteration's outcome.
"""

from __future__ import annotations

import asyncio
from typing import Any

from paseo_hookspecs.records import AgentRecord

from paseo.agents.live import LiveAgent

RECORD = AgentRecord(id="a1", provider="claude", cwd="/w", createdAt="t", updatedAt="t")


def _agent() -> LiveAgent:
    # Only the change signal is used: no timeline or writer is involved in a wait.
    none: Any = None
    return LiveAgent(record=RECORD, timeline=none, writer=none)


async def _wait_forever(agent: LiveAgent, wakes: list[int]) -> None:
    while True:  # as AgentService.wait does: re-check, wait for the next change
        await agent.wait_changed(30)
        wakes.append(1)


def test_a_cancellation_landing_as_the_agent_changes_is_not_lost() -> None:
    async def scenario() -> bool:
        agent = _agent()
        wakes: list[int] = []
        waiter = asyncio.create_task(_wait_forever(agent, wakes))
        await asyncio.sleep(0.01)
        agent.notify()
        await asyncio.sleep(0)  # the event's own waiter is done; the waiter has not resumed
        waiter.cancel()
        await asyncio.wait({waiter}, timeout=1)
        ended = waiter.cancelled()
        if not ended:  # lost: cancelled again so the test ends
            waiter.cancel()
            await asyncio.wait({waiter}, timeout=5)
        return ended

    assert asyncio.run(scenario()) is True


def test_a_wait_returns_at_the_next_change_or_after_its_time() -> None:
    async def scenario() -> tuple[bool, bool]:
        agent = _agent()
        woken = asyncio.create_task(agent.wait_changed(30))
        await asyncio.sleep(0.01)
        agent.notify()
        changed = (await asyncio.wait({woken}, timeout=5))[0] == {woken}
        timed_out = asyncio.create_task(agent.wait_changed(0.01))
        returned = (await asyncio.wait({timed_out}, timeout=5))[0] == {timed_out}
        return changed, returned and timed_out.exception() is None

    assert asyncio.run(scenario()) == (True, True)
