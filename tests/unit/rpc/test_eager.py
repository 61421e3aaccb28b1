"""paseo.rpc.eager: a task's first step runs at once, inside that task."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from paseo.rpc import eager

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="outer")


def test_a_coroutine_that_waits_for_nothing_is_done_when_start_returns() -> None:
    steps: list[str] = []

    async def quick() -> int:
        steps.append("ran")
        return 7

    async def main() -> None:
        task = eager.start(asyncio.get_running_loop(), quick())
        assert steps == ["ran"]
        assert await task == 7

    asyncio.run(main())


def test_the_first_step_runs_inside_its_own_task_and_context() -> None:
    async def body() -> tuple[Any, str]:
        me = asyncio.current_task()
        VAR.set("inner")
        await asyncio.sleep(0)
        assert asyncio.current_task() is me
        return me, VAR.get()

    async def main() -> None:
        outer = asyncio.current_task()
        task = eager.start(asyncio.get_running_loop(), body())
        # The caller is its own task again, and the call's context change stayed in the call.
        assert asyncio.current_task() is outer
        assert VAR.get() == "outer"
        me, value = await task
        assert me is task
        assert value == "inner"

    asyncio.run(main())


def test_a_timeout_entered_in_the_first_step_cancels_the_call_not_the_caller() -> None:
    async def slow() -> str:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.Event().wait()
        except TimeoutError:
            return "timed out"
        return "no"

    async def main() -> None:
        task = eager.start(asyncio.get_running_loop(), slow())
        assert await asyncio.wait_for(task, 5) == "timed out"
        assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]

    asyncio.run(main())


def test_cancelling_a_suspended_call_reaches_the_coroutine() -> None:
    cleaned: list[str] = []

    async def waits() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("finally")

    async def main() -> None:
        task = eager.start(asyncio.get_running_loop(), waits())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert cleaned == ["finally"]

    asyncio.run(main())


def test_errors_reach_whoever_awaits_the_task() -> None:
    async def fails_at_once() -> None:
        raise ValueError("first step")

    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise KeyError("later")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        with pytest.raises(ValueError, match="first step"):
            await eager.start(loop, fails_at_once())
        with pytest.raises(KeyError):
            await eager.start(loop, fails_later())
        future: asyncio.Future[int] = loop.create_future()

        async def awaits_a_result() -> int:
            return await future

        task = eager.start(loop, awaits_a_result())
        loop.call_soon(future.set_exception, OSError("from the future"))
        with pytest.raises(OSError, match="from the future"):
            await task

    asyncio.run(main())


def test_inline_runs_a_quick_coroutine_in_the_caller_with_no_task_of_its_own() -> None:
    seen: list[Any] = []

    async def quick() -> int:
        seen.append(asyncio.current_task())
        VAR.set("inner")
        return 7

    async def main() -> None:
        outer = asyncio.current_task()
        assert eager.inline(quick()) == (True, 7)
        assert seen == [outer]  # the caller's task: inline creates none
        assert VAR.get() == "outer"  # the step ran in a copy of the caller's context

    asyncio.run(main())


def test_inline_hands_back_the_rest_of_a_coroutine_that_suspends() -> None:
    steps: list[str] = []

    async def suspends(future: asyncio.Future[int]) -> int:
        steps.append("first")
        value = await future
        steps.append("rest")
        return value * 2

    async def main() -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[int] = loop.create_future()
        done, rest = eager.inline(suspends(future))
        assert not done
        assert steps == ["first"]
        task = loop.create_task(rest)
        loop.call_soon(future.set_result, 21)
        assert await asyncio.wait_for(task, 5) == 42
        assert steps == ["first", "rest"]

    asyncio.run(main())


def test_inline_raises_what_the_first_step_raised() -> None:
    async def fails() -> None:
        raise ValueError("first step")

    with pytest.raises(ValueError, match="first step"):
        eager.inline(fails())
