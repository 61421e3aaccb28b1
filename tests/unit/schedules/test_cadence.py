"""Cron slots in time zones (across DST changes), the legacy interval, and refused cadences."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.records import CronCadence, EveryCadence

from paseo.schedules.cadence import check, next_slot

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


def cron(expression: str, timezone: str | None = None) -> CronCadence:
    if timezone is None:
        return CronCadence(type="cron", expression=expression)
    return CronCadence(type="cron", expression=expression, timezone=timezone)


def slots(cadence: CronCadence, start: datetime, count: int) -> list[datetime]:
    found, moment = [], start
    for _ in range(count):
        moment = next_slot(cadence, after=moment)
        found.append(moment)
    return found


def test_cron_without_a_zone_is_read_in_utc() -> None:
    start = datetime(2026, 1, 5, 8, 59, tzinfo=UTC)
    assert next_slot(cron("0 9 * * *"), after=start) == datetime(2026, 1, 5, 9, tzinfo=UTC)


def test_the_next_slot_is_strictly_after_the_given_time() -> None:
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    assert next_slot(cron("0 9 * * *"), after=start) == datetime(2026, 1, 6, 9, tzinfo=UTC)


def test_cron_is_read_in_its_zone_winter_and_summer() -> None:
    winter = next_slot(cron("0 9 * * *", BERLIN), after=datetime(2026, 1, 5, tzinfo=UTC))
    summer = next_slot(cron("0 9 * * *", BERLIN), after=datetime(2026, 7, 6, tzinfo=UTC))
    assert winter == datetime(2026, 1, 5, 8, tzinfo=UTC)
    assert summer == datetime(2026, 7, 6, 7, tzinfo=UTC)


def test_a_daily_job_in_the_skipped_hour_runs_once_right_after_spring_forward() -> None:
    # 2026-03-29 in Berlin: 02:00 CET becomes 03:00 CEST, 02:30 does not exist that day.
    found = slots(cron("30 2 * * *", BERLIN), datetime(2026, 3, 27, 12, tzinfo=UTC), 3)
    assert found == [
        datetime(2026, 3, 28, 1, 30, tzinfo=UTC),  # 02:30 CET
        datetime(2026, 3, 29, 1, 0, tzinfo=UTC),  # 03:00 CEST, the first instant after the gap
        datetime(2026, 3, 30, 0, 30, tzinfo=UTC),  # 02:30 CEST
    ]


def test_a_daily_job_in_the_repeated_hour_runs_once_on_fall_back() -> None:
    # 2026-10-25 in Berlin: 03:00 CEST becomes 02:00 CET, 02:30 happens twice.
    found = slots(cron("30 2 * * *", BERLIN), datetime(2026, 10, 23, 12, tzinfo=UTC), 3)
    assert found == [
        datetime(2026, 10, 24, 0, 30, tzinfo=UTC),
        datetime(2026, 10, 25, 0, 30, tzinfo=UTC),  # the first 02:30 (CEST) only
        datetime(2026, 10, 26, 1, 30, tzinfo=UTC),
    ]


def test_new_york_transitions_never_fire_a_daily_job_twice() -> None:
    # 2026-03-08 spring forward and 2026-11-01 fall back, at 02:00 local.
    spring = slots(cron("30 2 * * *", NEW_YORK), datetime(2026, 3, 7, 12, tzinfo=UTC), 2)
    fall = slots(cron("30 1 * * *", NEW_YORK), datetime(2026, 10, 31, 12, tzinfo=UTC), 2)
    assert [slot.date() for slot in spring] == [datetime(2026, 3, d).date() for d in (8, 9)]
    assert spring[0] == datetime(2026, 3, 8, 7, 0, tzinfo=UTC)  # 03:00 EDT
    assert fall == [
        datetime(2026, 11, 1, 5, 30, tzinfo=UTC),  # 01:30 EDT, not again at 01:30 EST
        datetime(2026, 11, 2, 6, 30, tzinfo=UTC),
    ]


def test_a_sub_hourly_job_runs_in_both_occurrences_of_the_repeated_hour() -> None:
    found = slots(cron("0 * * * *", BERLIN), datetime(2026, 10, 24, 23, 30, tzinfo=UTC), 4)
    assert found == [datetime(2026, 10, 25, hour, tzinfo=UTC) for hour in (0, 1, 2, 3)]


def test_every_counts_from_the_previous_slot_and_skips_missed_ones() -> None:
    every = EveryCadence(type="every", everyMs=60_000)
    previous = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
    on_time = previous + timedelta(milliseconds=3)
    late = previous + timedelta(minutes=5, seconds=10)
    assert next_slot(every, after=on_time, previous=previous) == previous + timedelta(minutes=1)
    assert next_slot(every, after=late, previous=previous) == previous + timedelta(minutes=6)
    assert next_slot(every, after=previous) == previous + timedelta(minutes=1)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("* * * *", "exactly five fields"),
        ("0 0 * * * *", "exactly five fields"),
        ("61 * * * *", "bad minute"),
        ("0 25 * * *", "bad hour"),
        ("0 0 30 2 *", "bad day-of-month"),
    ],
)
def test_invalid_cron_expressions_are_refused_with_what_is_wrong(
    expression: str, message: str
) -> None:
    with pytest.raises(InvalidParams, match="invalid cron expression") as refused:
        check(cron(expression))
    assert message in refused.value.message


def test_an_unknown_zone_is_refused_by_name() -> None:
    with pytest.raises(InvalidParams, match="unknown time zone 'Mars/Olympus'"):
        check(cron("0 9 * * *", "Mars/Olympus"))
