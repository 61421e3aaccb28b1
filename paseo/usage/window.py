"""The time window of a usage query: ``7d``, ``12h``, ``2w``, a date or an ISO 8601 instant."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from paseo_hookspecs.errors import InvalidParams

from paseo.agents.budgets import iso

_RELATIVE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def resolve_since(text: str | None, now: datetime | None = None) -> str | None:
    """The instant ``text`` names, as an ISO string comparable with stored times.

    ``7d`` is seven days before ``now``; ``2026-11-30`` is that UTC day's start; an ISO 8601
    instant is itself (a naive one is UTC). ``InvalidParams`` names the accepted forms.
    """
    if text is None or not text.strip():
        return None
    moment = now or datetime.now(UTC)
    relative = _RELATIVE.match(text)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        return iso(moment - timedelta(**{_UNITS[unit]: amount}))
    value = text.strip()
    try:
        if len(value) == 10:
            day = date.fromisoformat(value)
            return iso(datetime(day.year, day.month, day.day, tzinfo=UTC))
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidParams(
            f"cannot read {text!r} as a time: give a duration back from now (30m, 12h, 7d, 2w),"
            " a date (2026-11-30) or an ISO 8601 instant",
            data={"since": text},
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return iso(parsed)
