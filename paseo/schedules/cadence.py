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
cadence is a rolling interval of ``everyMs`` milliseconds counted from the previous slot.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import CronCadence, EveryCadence

Cadence = CronCadence | EveryCadence

CRON_FIELDS = 5


def zone(name: str | None) -> tzinfo:
    """The IANA zone ``name`` (``None``: UTC); ``InvalidParams`` naming it when unknown."""
    if name is None or name == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidParams(
            f"unknown time zone {name!r}: use an IANA name such as Europe/Paris or "
            "America/New_York",
            data={"timezone": name},
        ) from exc


def check_cron(expression: str) -> None:
    """Refuse anything but a valid five-field cron expression, saying what is wrong."""
    fields = expression.split()
    if len(fields) != CRON_FIELDS:
        raise InvalidParams(
            f"invalid cron expression {expression!r}: it needs exactly five fields "
            f"(minute hour day-of-month month day-of-week), got {len(fields)}",
            data={"expression": expression},
        )
    try:
        CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as exc:
        raise InvalidParams(
            f"invalid cron expression {expression!r}: {str(exc).lower()}",
            data={"expression": expression},
        ) from exc


def check(cadence: Cadence) -> None:
    """Validate a cadence before it is stored (the record model checks only its shape)."""
    if isinstance(cadence, CronCadence):
        check_cron(cadence.expression)
        zone(cadence.timezone)
    elif cadence.everyMs <= 0:
        raise InvalidParams(f"the interval must be positive, got {cadence.everyMs} ms")


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
