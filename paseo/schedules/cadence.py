"""When a schedule fires: validating a cadence and computing its next slot.

Cron expressions have exactly five fields (minute, hour, day of month, month, day of week) and
are evaluated by `cronsim <https://pypi.org/project/cronsim/>`_ in the cadence's IANA
``timezone`` (absent means UTC). Across a DST change cronsim behaves as Debian's cron does:

* **spring forward** — a job whose local time does not exist that day (``30 2 * * *`` when the
  clocks go from 02:00 to 03:00) runs **once**, at the first instant after the gap (03:00);
* **fall back** — a job whose local time happens twice (``30 2 * * *`` when the clocks go from
  03:00 back to 02:00) runs **once**, at the first occurrence; only jobs whose hour field is a
  wildcard or a range (``*/30 * * * *``) run in both occurrences of the repeated hour, because
  both are distinct instants they match.

So a daily job never runs twice on a transition day and is never skipped. The legacy ``every``
cadence is a rolling interval of ``everyMs`` milliseconds counted from the previous slot, at
least :func:`min_every_ms` (a minute, the granularity of cron: a schedule every millisecond once
started agents faster than they could finish) and at most :data:`MAX_EVERY_MS`.

Every refusal is ``InvalidParams`` whose message starts with the field it is about
(``cadence.everyMs``, ``cadence.expression``, ``cadence.timezone``) and whose data says it too.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import CronCadence, EveryCadence

Cadence = CronCadence | EveryCadence

CRON_FIELDS = 5

MIN_EVERY_MS = 60_000
"""The shortest ``every`` interval by default (``PASEO_SCHEDULE_MIN_INTERVAL``, in seconds,
lowers it for tests)."""
MAX_EVERY_MS = 366 * 86_400_000
"""The longest ``every`` interval (a year): past that a cron expression says it better, and
date arithmetic stays far from its limits."""


def min_every_ms() -> int:
    raw = os.environ.get("PASEO_SCHEDULE_MIN_INTERVAL")
    try:
        seconds = float(raw) if raw else None
    except ValueError:
        seconds = None
    if seconds is None or not 0 < seconds < MAX_EVERY_MS / 1000:
        return MIN_EVERY_MS
    return max(1, round(seconds * 1000))


def _refuse(field: str, message: str, **data: object) -> InvalidParams:
    return InvalidParams(f"{field}: {message}", data={"field": field, **data})


def _seconds_text(milliseconds: int) -> str:
    seconds = milliseconds / 1000
    return f"{seconds:g} s"


def zone(name: str | None) -> tzinfo:
    """The IANA zone ``name`` (``None``: UTC); ``InvalidParams`` naming it when unknown."""
    if name is None or name == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise _refuse(
            "cadence.timezone",
            f"unknown time zone {name[:100]!r}: use an IANA name such as Europe/Paris or "
            "America/New_York",
            timezone=name[:100],
        ) from exc


def check_cron(expression: str) -> None:
    """Refuse anything but a valid five-field cron expression, saying what is wrong."""
    shown = expression[:200]
    fields = expression.split()
    if len(fields) != CRON_FIELDS:
        raise _refuse(
            "cadence.expression",
            f"invalid cron expression {shown!r}: it needs exactly five fields "
            f"(minute hour day-of-month month day-of-week), got {len(fields)}",
            expression=shown,
        )
    try:
        # Built and stepped once: some expressions parse but cannot produce a time.
        next(CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC)))
    except (CronSimError, ValueError, OverflowError, StopIteration) as exc:
        reason = str(exc).lower() or "it never matches a time"
        raise _refuse(
            "cadence.expression", f"invalid cron expression {shown!r}: {reason}", expression=shown
        ) from exc


def check_every(every_ms: int) -> None:
    """Refuse an interval that is not positive, shorter than :func:`min_every_ms` or longer
    than :data:`MAX_EVERY_MS`."""
    if every_ms <= 0:
        raise _refuse(
            "cadence.everyMs", f"the interval must be positive, got {every_ms} ms", everyMs=every_ms
        )
    minimum = min_every_ms()
    if every_ms < minimum:
        raise _refuse(
            "cadence.everyMs",
            f"the interval must be at least {_seconds_text(minimum)}, got {every_ms} ms "
            "(each run may start an agent)",
            everyMs=every_ms,
            minimum=minimum,
        )
    if every_ms > MAX_EVERY_MS:
        raise _refuse(
            "cadence.everyMs",
            f"the interval must be at most {MAX_EVERY_MS // 86_400_000} days, got {every_ms} ms; "
            "use a cron expression for rarer runs",
            everyMs=every_ms,
            maximum=MAX_EVERY_MS,
        )


def check(cadence: Cadence) -> None:
    """Validate a cadence before it is stored (the record model checks only its shape)."""
    if isinstance(cadence, CronCadence):
        check_cron(cadence.expression)
        zone(cadence.timezone)
    else:
        check_every(cadence.everyMs)


def next_slot(cadence: Cadence, *, after: datetime, previous: datetime | None = None) -> datetime:
    """The first slot strictly after ``after`` (aware), in UTC.

    ``previous`` (the slot that just fired) anchors an ``every`` cadence so its slots do not
    drift by the time each wake-up takes; slots missed meanwhile are skipped, not replayed.
    """
    if isinstance(cadence, EveryCadence):
        step = timedelta(milliseconds=cadence.everyMs)
        if previous is None:
            return (after + step).astimezone(UTC)
        candidate = previous + step
        if candidate <= after:
            missed = (after - candidate) // step + 1
            candidate += step * missed
        return candidate.astimezone(UTC)
    local = after.astimezone(zone(cadence.timezone))
    return next(CronSim(cadence.expression, local)).astimezone(UTC)
