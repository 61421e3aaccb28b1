"""A connection's call budget: how many calls it may make per second (a token bucket of
``rate_burst`` tokens refilled at ``rate_per_second``) and how many may be in flight at once
(``max_in_flight``). Kept apart from the session's queue and lifecycle: it is arithmetic on the
limits, with no I/O, and is the same for frames and for agent port calls."""

from __future__ import annotations

import time

from paseo_hookspecs.errors import PaseoError
from paseo_hookspecs.transport import SessionLimits

from paseo.rpc.errors import RateLimited


class CallBudget:
    """See the module docstring."""

    __slots__ = ("_limits", "_refilled", "_tokens")

    def __init__(self, limits: SessionLimits) -> None:
        self._limits = limits
        self._tokens = float(limits.rate_burst)
        self._refilled = time.monotonic()

    def take(self, now: float, in_flight: int) -> PaseoError | None:
        """Spend one call at ``now`` (:func:`time.monotonic`) with ``in_flight`` calls running;
        the ``rate_limited`` error to answer instead, when over either bound."""
        limits = self._limits
        self._tokens = min(
            float(limits.rate_burst), self._tokens + (now - self._refilled) * limits.rate_per_second
        )
        self._refilled = now
        if self._tokens < 1:
            return RateLimited(
                "too many requests on this connection",
                data={"retryAfterMs": int(1000 / limits.rate_per_second) + 1},
            )
        if in_flight >= limits.max_in_flight:
            return RateLimited(
                "too many requests in flight on this connection",
                data={"maxInFlight": limits.max_in_flight},
            )
        self._tokens -= 1
        return None
