"""Tasks whose first step runs at once (Python 3.12's eager tasks, on 3.11 as well).

A call that completes without waiting for anything (``server.ping``, an answer from memory)
is then answered while its frame is being read, instead of one task switch later: the
connection's reader hands the frame over and the answer is written before it reads the next.

The first step runs inside the task it belongs to: :func:`asyncio.current_task` is that task
(so ``asyncio.timeout`` and task groups bind to it) and it runs in the task's own copy of the
context. A coroutine that suspends carries on in its task as any other would.

:func:`inline` goes one step further for a coroutine that promises not to look at its task
(a method declared ``immediate``): its first step runs in the caller with no task at all, and
only if it suspends does a task carry on with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Coroutine, Generator
from typing import Any

_PYTHON_312 = sys.version_info >= (3, 12)


def start(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
    """Wrap ``coro`` in a task of ``loop`` and run its first step now."""
    if _PYTHON_312:
        return asyncio.Task(coro, loop=loop, eager_start=True)  # type: ignore[call-arg,unused-ignore]
    context = contextvars.copy_context()
    stepper = _Stepper(coro)
    # The task is scheduled now; its own first step finds the coroutine advanced (or done).
    task = loop.create_task(stepper.rest(), context=context)
    outer = asyncio.current_task(loop)
    if outer is not None:
        asyncio.tasks._leave_task(loop, outer)  # what 3.12 swaps in C
    asyncio.tasks._enter_task(loop, task)
    try:
        context.run(stepper.first)
    finally:
        asyncio.tasks._leave_task(loop, task)
        if outer is not None:
            asyncio.tasks._enter_task(loop, outer)
    return task


def inline(coro: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
    """Run ``coro``'s first step now, in the caller, without a task of its own (for a coroutine
    that does not look at its task: no ``asyncio.timeout``, task group or ``current_task``).

    ``(True, result)`` when it finished there; else ``(False, rest)``: ``rest`` is an awaitable
    of what remains, for the caller to await in a task (where its later steps run). The step
    runs in a copy of the caller's context. An exception of that step is raised here.
    """
    stepper = _Stepper(coro)
    contextvars.copy_context().run(stepper.first)
    if not stepper.done:
        return False, stepper.rest()
    if stepper.error is not None:
        raise stepper.error
    return True, stepper.result


class _Pass:
    """Hands one value the wrapped coroutine yielded up to the task, and back what it sends."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.value)


class _Stepper:
    """Drives a coroutine: its first step by :meth:`first`, the rest from its task."""

    __slots__ = ("coro", "done", "error", "result", "yielded")

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.coro = coro
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None
        self.yielded: Any = None

    def first(self) -> None:
        try:
            self.yielded = self.coro.send(None)
        except StopIteration as stop:
            self.done, self.result = True, stop.value
        except BaseException as exc:  # noqa: BLE001 - handed to the task, which raises it
            self.done, self.error = True, exc

    async def rest(self) -> Any:
        if self.done:
            if self.error is not None:
                raise self.error
            return self.result
        value = self.yielded
        while True:
            try:
                sent = await _Pass(value)
            except BaseException as exc:  # noqa: BLE001 - thrown into the coroutine (a cancel)
                try:
                    value = self.coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
            else:
                try:
                    value = self.coro.send(sent)
                except StopIteration as stop:
                    return stop.value
