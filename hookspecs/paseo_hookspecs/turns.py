"""Turn bookkeeping a session needs whatever its program's protocol.

A session runs at most one turn at a time; a second prompt is refused with ``Conflict`` (the
kernel interrupts first). Turns are numbered from 1 (the ``turnId`` of ``turn_started`` when the
program has no ids of its own). A turn can be ended from several places — the program's answer,
an interrupt that got no answer, the program exiting, ``close`` — and must end exactly once:
:meth:`TurnLedger.finish` says which caller does it, and :meth:`TurnLedger.settle` lets the next
turn begin once the end is delivered (so the events of two turns never interleave). Usage::

    turn = self._turns.begin()            # in prompt(); Conflict while one runs
    await sink(TurnStarted(provider=self.id, turnId=str(turn.number)))
    ...
    if self._turns.finish(turn):          # wherever the turn may end
        try:
            await sink(TurnCompleted(provider=self.id))
        finally:
            self._turns.settle(turn)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from paseo_hookspecs.errors import Conflict


@dataclass(eq=False)
class Turn:
    """One turn of a session."""

    number: int
    cancel_requested: bool = False
    """An interrupt was asked for (the end then reads as a cancellation)."""
    finished: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the turn has ended."""


class TurnLedger:
    """See the module docstring."""

    def __init__(self) -> None:
        self.current: Turn | None = None
        """The running turn, ``None`` between turns."""
        self._count = 0

    @property
    def active(self) -> bool:
        return self.current is not None

    def begin(self) -> Turn:
        """Start the next turn; ``Conflict`` while one is running."""
        if self.current is not None:
            raise Conflict("a turn is already running; interrupt it first")
        self._count += 1
        self.current = Turn(self._count)
        return self.current

    def finish(self, turn: Turn | None = None) -> Turn | None:
        """Claim the end of ``turn`` (default: the running one). Returns it when this call is
        the one that ends it, and ``None`` when it had ended already or is not the running turn
        (a stale end). Call :meth:`settle` once the end is delivered."""
        turn = turn or self.current
        if turn is None or turn.finished or turn is not self.current:
            return None
        turn.finished = True
        return turn

    def settle(self, turn: Turn) -> None:
        """The end of ``turn`` is delivered: the next turn may begin, waiters on ``done`` wake."""
        if self.current is turn:
            self.current = None
        turn.done.set()


__all__ = ["Turn", "TurnLedger"]
