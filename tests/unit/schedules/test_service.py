"""The scheduler on the real JSON store with an injected clock: when runs happen, what they
record, and what completes, pauses, skips or recovers a schedule."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.records import ScheduleRecord, dump_record
from unit.schedules.harness import START, Harness, run, running

from paseo.schedules.clock import iso
from paseo.schedules.ports import AgentState, TurnOutcome
from paseo.schedules.runs import OUTPUT_LIMIT

EVERY_MINUTE = {"type": "every", "everyMs": 60_000}
MINUTE = timedelta(minutes=1)


def test_an_every_schedule_runs_a_new_labelled_agent_and_records_its_reply(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(cadence=EVERY_MINUTE, prompt="report")
            assert schedule.nextRunAt == iso(START + MINUTE)
            h.clock.advance(MINUTE)
            record = await h.runs_settled(schedule.id, 1)
            (only,) = record.runs
            turn = h.agents.turns[0]
            assert turn.labels == {"paseo.schedule-id": schedule.id, "paseo.schedule-run": only.id}
            assert (only.status, only.output, only.agentId) == (
                "succeeded",
                "reply to report",
                turn.agent_id,
            )
            assert only.scheduledFor == iso(START + MINUTE)
            assert only.error is None
            assert only.endedAt is not None
            assert record.nextRunAt == iso(START + 2 * MINUTE)
            assert record.lastRunAt == iso(START + MINUTE)

    run(body)


def test_nothing_runs_before_the_slot(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            await h.create(cadence=EVERY_MINUTE)
            h.clock.advance(MINUTE - timedelta(milliseconds=1))
            await h.quiet()
            assert h.agents.turns == []

    run(body)


def test_a_cron_schedule_fires_at_its_local_time(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(
                cadence={"type": "cron", "expression": "0 14 * * *", "timezone": "Europe/Paris"}
            )
            # 14:00 in Paris in January is 13:00 UTC, one hour after START.
            assert schedule.nextRunAt == iso(START + timedelta(hours=1))
            h.clock.advance(timedelta(hours=1))
            record = await h.runs_settled(schedule.id, 1)
            assert record.nextRunAt == iso(START + timedelta(days=1, hours=1))

    run(body)


def test_max_runs_completes_the_schedule_with_its_last_run(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(cadence=EVERY_MINUTE, maxRuns=2)
            for count in (1, 2):
                h.clock.advance(MINUTE)
                record = await h.runs_settled(schedule.id, count)
            assert (record.status, record.nextRunAt) == ("completed", None)
            h.clock.advance(10 * MINUTE)
            await h.quiet()
            assert len(h.agents.turns) == 2

    run(body)


def test_expiry_completes_the_schedule_when_no_slot_is_left(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            expires = START + timedelta(minutes=2, seconds=30)
            schedule = await h.create(cadence=EVERY_MINUTE, expiresAt=iso(expires))
            h.clock.advance(MINUTE)
            await h.runs_settled(schedule.id, 1)
            h.clock.advance(MINUTE)
            record = await h.runs_settled(schedule.id, 2)
            assert (record.status, record.nextRunAt) == ("completed", None)
            h.clock.advance(10 * MINUTE)
            await h.quiet()
            assert len(h.agents.turns) == 2

    run(body)


def test_pause_stops_runs_and_resume_starts_from_the_next_slot_after_now(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(cadence=EVERY_MINUTE)
            paused = await h.service.pause(schedule.id)
            assert (paused.status, paused.pausedAt, paused.nextRunAt) == (
                "paused",
                iso(START),
                None,
            )
            h.clock.advance(5 * MINUTE + timedelta(seconds=10))
            await h.quiet()
            assert h.agents.turns == []
            resumed = await h.service.resume(schedule.id)
            assert (resumed.status, resumed.pausedAt) == ("active", None)
            assert resumed.nextRunAt == iso(START + 6 * MINUTE + timedelta(seconds=10))
            h.clock.advance(MINUTE)
            await h.runs_settled(schedule.id, 1)

    run(body)


def test_a_slot_that_comes_while_the_previous_run_works_is_skipped(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            h.agents.hold = True
            schedule = await h.create(cadence=EVERY_MINUTE)
            h.clock.advance(MINUTE)
            await h.until(lambda: len(h.agents.turns) == 1, "the first run")
            for _ in range(3):
                h.clock.advance(MINUTE)
                await h.quiet()
            assert len(h.agents.turns) == 1
            record = await h.record(schedule.id)
            assert [r.status for r in record.runs] == ["running"]
            assert record.nextRunAt == iso(START + 5 * MINUTE)
            h.agents.finish(h.agents.turns[0], TurnOutcome("succeeded", "late"))
            await h.runs_settled(schedule.id, 1)
            h.clock.advance(MINUTE)
            await h.until(lambda: len(h.agents.turns) == 2, "the next run on its slot")

    run(body)


def test_run_now_is_refused_while_a_run_is_in_progress(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            h.agents.hold = True
            schedule = await h.create(cadence=EVERY_MINUTE)
            record, run_id = await h.service.run_now(schedule.id)
            assert record.runs[-1].id == run_id
            assert record.nextRunAt == schedule.nextRunAt
            with pytest.raises(Conflict, match="in progress"):
                await h.service.run_now(schedule.id)

    run(body)


def _crashed(schedule: ScheduleRecord) -> dict[str, object]:
    """``schedule`` as a daemon that died during its run left it: a run ``running`` and a
    ``nextRunAt`` long past."""
    data = dump_record(schedule)
    data["runs"] = [
        {
            "id": "0badc0de",
            "scheduledFor": iso(START),
            "startedAt": iso(START),
            "endedAt": None,
            "status": "running",
            "agentId": None,
            "output": None,
            "error": None,
        }
    ]
    data["nextRunAt"] = iso(START + MINUTE)
    return data


@pytest.mark.parametrize("driver", ["json", "sqlite"])
def test_boot_fails_runs_left_running_and_skips_missed_slots(tmp_path: Path, driver: str) -> None:
    async def body() -> None:
        async with running(tmp_path, driver=driver) as first:
            schedule = await first.create(cadence=EVERY_MINUTE)
            await first.store.schedules.update(schedule.id, _crashed(schedule))
        async with running(tmp_path, start=False, driver=driver) as h:
            h.clock.advance(30 * MINUTE + timedelta(seconds=15))
            await h.service.start()
            record = await h.record(schedule.id)
            (left,) = record.runs
            assert (left.status, left.error) == ("failed", "daemon restarted")
            assert left.endedAt == iso(h.clock.now())
            # 29 missed slots are skipped, not replayed: the next one is the first after now.
            assert record.nextRunAt == iso(START + 31 * MINUTE)
            await h.quiet()
            assert h.agents.turns == []
            h.clock.advance(MINUTE)
            await h.runs_settled(schedule.id, 2)

    run(body)


def test_an_agent_target_that_is_busy_fails_the_run_and_the_schedule_goes_on(
    tmp_path: Path,
) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            agent_id = h.agents.add_agent()
            schedule = await h.create(
                cadence=EVERY_MINUTE, target={"type": "agent", "agentId": agent_id}
            )
            h.agents.agents[agent_id] = AgentState(id=agent_id, archived=False, busy=True)
            h.clock.advance(MINUTE)
            record = await h.runs_settled(schedule.id, 1)
            assert record.runs[0].status == "failed"
            assert "busy" in (record.runs[0].error or "")
            assert record.status == "active"
            h.agents.agents[agent_id] = AgentState(id=agent_id, archived=False, busy=False)
            h.clock.advance(MINUTE)
            record = await h.runs_settled(schedule.id, 2)
            assert (record.runs[1].status, record.runs[1].agentId) == ("succeeded", agent_id)

    run(body)


def test_a_failed_turn_and_an_over_long_reply_are_recorded(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            h.agents.hold = True
            schedule = await h.create(cadence=EVERY_MINUTE)
            h.clock.advance(MINUTE)
            await h.until(lambda: len(h.agents.turns) == 1, "the first run")
            h.agents.finish(h.agents.turns[0], TurnOutcome("succeeded", "x" * 10_000))
            record = await h.runs_settled(schedule.id, 1)
            output = record.runs[0].output or ""
            assert output.startswith("x" * OUTPUT_LIMIT)
            assert len(output) < OUTPUT_LIMIT + 100
            h.clock.advance(MINUTE)
            await h.until(lambda: len(h.agents.turns) == 2, "the second run")
            h.agents.finish(h.agents.turns[1], TurnOutcome("failed", None, "model said no"))
            record = await h.runs_settled(schedule.id, 2)
            assert (record.runs[1].status, record.runs[1].error) == ("failed", "model said no")

    run(body)


@pytest.mark.parametrize("driver", ["json", "sqlite"])
def test_the_history_keeps_the_newest_runs_and_counts_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, driver: str
) -> None:
    monkeypatch.setenv("PASEO_SCHEDULE_HISTORY", "3")

    async def body() -> None:
        async with running(tmp_path, driver=driver) as h:
            schedule = await h.create(cadence=EVERY_MINUTE, maxRuns=5)
            ids = []
            for count in range(1, 6):
                h.clock.advance(MINUTE)
                await h.until(lambda n=count: len(h.agents.turns) == n, f"run {count}")
                record = await h.until(
                    lambda: _settled(h, schedule.id), f"run {count} to be recorded"
                )
                ids.append(record.runs[-1].id)
            assert [r.id for r in record.runs] == ids[-3:]
            assert (record.model_extra or {})["runCount"] == 5
            assert record.status == "completed"

    run(body)


async def _settled(h: Harness, schedule_id: str) -> ScheduleRecord | None:
    record = await h.record(schedule_id)
    return record if record.runs and record.runs[-1].status != "running" else None


def test_delete_removes_the_schedule_and_announces_it(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(cadence=EVERY_MINUTE, name="nightly")
            assert (await h.service.get("nightly")).id == schedule.id
            assert (await h.service.get(schedule.id[:3])).id == schedule.id
            await h.service.delete("nightly")
            assert await h.store.schedules.get(schedule.id) is None
            assert h.publisher.events[-1] == (
                "schedules",
                "schedule.updated",
                {"scheduleId": schedule.id, "schedule": None},
            )
            h.clock.advance(2 * MINUTE)
            await h.quiet()
            assert h.agents.turns == []
            with pytest.raises(NotFound):
                await h.service.get(schedule.id)

    run(body)


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"cadence": {"type": "cron", "expression": "every day"}}, InvalidParams, "five fields"),
        (
            {"cadence": {"type": "cron", "expression": "0 9 * * *", "timezone": "Nowhere/X"}},
            InvalidParams,
            "unknown time zone",
        ),
        ({"cadence": {"type": "every", "everyMs": 0}}, InvalidParams, "must be positive"),
        ({"cadence": {"type": "every", "everyMs": -5}}, InvalidParams, "must be positive"),
        (
            {"cadence": EVERY_MINUTE, "target": {"type": "agent", "agentId": "ghost"}},
            NotFound,
            "unknown target agent 'ghost'",
        ),
        ({"cadence": EVERY_MINUTE, "maxRuns": 0}, InvalidParams, "at least 1"),
        ({"cadence": EVERY_MINUTE, "expiresAt": iso(START)}, InvalidParams, "not in the future"),
        (
            {
                "cadence": EVERY_MINUTE,
                "target": {"type": "new-agent", "config": {"cwd": "relative/dir"}},
            },
            InvalidParams,
            "absolute",
        ),
    ],
)
def test_bad_input_is_refused_at_create(
    tmp_path: Path, fields: dict[str, object], error: type[Exception], message: str
) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            with pytest.raises(error, match=message):
                await h.create(**fields)
            assert (await h.service.list_schedules()) == []

    run(body)


def test_an_invalid_schedule_file_is_quarantined_and_reported(tmp_path: Path) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "deadbeef.json").write_text('{"id": "deadbeef", "prompt": ""}')

    async def body() -> None:
        async with running(tmp_path) as h:
            (item,) = h.service.quarantined
            assert item.path.endswith("deadbeef.json")
            assert await h.service.list_schedules() == []

    run(body)


def test_a_forward_clock_jump_runs_once_then_resumes_the_cadence(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(cadence=EVERY_MINUTE)
            h.clock.advance(30 * MINUTE + timedelta(seconds=5))
            record = await h.runs_settled(schedule.id, 1)
            assert record.runs[0].scheduledFor == iso(START + MINUTE)
            assert record.nextRunAt == iso(START + 31 * MINUTE)
            await h.quiet()
            assert len(h.agents.turns) == 1

    run(body)


def test_a_backward_clock_jump_never_fires_a_slot_early(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            schedule = await h.create(cadence=EVERY_MINUTE)
            h.clock.advance(-timedelta(hours=1))
            await h.quiet()
            h.clock.set(START + MINUTE - timedelta(seconds=1))
            await h.quiet()
            assert h.agents.turns == []
            h.clock.advance(timedelta(seconds=1))
            record = await h.runs_settled(schedule.id, 1)
            assert record.runs[0].scheduledFor == iso(START + MINUTE)

    run(body)


@pytest.mark.parametrize(
    ("cadence", "field", "message"),
    [
        ({"type": "every", "everyMs": 1}, "cadence.everyMs", "at least 60 s"),
        ({"type": "every", "everyMs": 59_999}, "cadence.everyMs", "at least 60 s"),
        ({"type": "every", "everyMs": 10**20}, "cadence.everyMs", "at most 366 days"),
        ({"type": "every", "everyMs": 2**63}, "cadence.everyMs", "at most 366 days"),
        ({"type": "cron", "expression": "0 0 31 2 *"}, "cadence.expression", "invalid cron"),
        (
            {"type": "cron", "expression": "0 9 * * *", "timezone": "Europe/Paris\x00"},
            "cadence.timezone",
            "unknown time zone",
        ),
    ],
)
def test_bad_cadences_are_invalid_params_naming_the_field(
    tmp_path: Path, cadence: dict[str, object], field: str, message: str
) -> None:
    """Issue 27, 6f/6g: a huge interval was an OverflowError (an internal error with a
    traceback); a 1 ms one started agents faster than they finished."""

    async def body() -> None:
        async with running(tmp_path) as h:
            with pytest.raises(InvalidParams, match=message) as refused:
                await h.create(cadence=cadence)
            assert refused.value.message.startswith(f"{field}: ")
            assert refused.value.data["field"] == field
            assert await h.service.list_schedules() == []

    run(body)


def test_runs_of_all_schedules_in_flight_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PASEO_SCHEDULE_MAX_CONCURRENT", "2")

    async def body() -> None:
        async with running(tmp_path) as h:
            h.agents.hold = True
            schedules = [await h.create(cadence=EVERY_MINUTE) for _ in range(3)]
            h.clock.advance(MINUTE)
            await h.until(lambda: len(h.agents.turns) == 2, "two runs")
            await h.quiet()
            assert len(h.agents.turns) == 2
            records = [await h.record(s.id) for s in schedules]
            (skipped,) = [r for r in records if not r.runs]
            # Its slot was skipped, not queued: it fires on its next slot.
            assert skipped.nextRunAt == iso(START + 2 * MINUTE)
            with pytest.raises(Conflict, match="the most allowed at once"):
                await h.service.run_now(skipped.id)
            h.agents.finish(h.agents.turns[0], TurnOutcome("succeeded", "done"))
            await h.until(lambda: len(h.service._running) == 1, "a run to end")
            await h.service.run_now(skipped.id)
            await h.until(lambda: len(h.agents.turns) == 3, "the run now under the cap")

    run(body)


def test_a_schedule_whose_target_agent_is_gone_is_paused_and_resumed_by_its_restore(
    tmp_path: Path,
) -> None:
    from paseo.schedules.service import PAUSED_REASON, TARGET_DELETED

    async def body() -> None:
        async with running(tmp_path) as h:
            agent_id = h.agents.add_agent()
            schedule = await h.create(
                cadence=EVERY_MINUTE, target={"type": "agent", "agentId": agent_id}
            )
            state = h.agents.agents.pop(agent_id)  # deleted
            h.clock.advance(MINUTE)
            record = await h.runs_settled(schedule.id, 1)
            assert record.runs[0].status == "failed"
            assert (record.status, record.nextRunAt) == ("paused", None)
            assert (record.model_extra or {})[PAUSED_REASON] == TARGET_DELETED
            for _ in range(3):
                h.clock.advance(MINUTE)
                await h.quiet()
            assert len((await h.record(schedule.id)).runs) == 1  # no more failing runs
            # Another agent's restore changes nothing; its own resumes the schedule.
            assert await h.service.agent_restored(h.agents.add_agent()) == []
            h.agents.agents[agent_id] = state
            assert await h.service.agent_restored(agent_id) == [schedule.id]
            record = await h.record(schedule.id)
            assert record.status == "active"
            assert (record.model_extra or {}).get(PAUSED_REASON) is None
            h.clock.advance(MINUTE)
            record = await h.runs_settled(schedule.id, 2)
            assert record.runs[1].status == "succeeded"

    run(body)


def test_a_paused_schedule_is_not_resumed_by_a_restore(tmp_path: Path) -> None:
    async def body() -> None:
        async with running(tmp_path) as h:
            agent_id = h.agents.add_agent()
            schedule = await h.create(
                cadence=EVERY_MINUTE, target={"type": "agent", "agentId": agent_id}
            )
            await h.service.pause(schedule.id)  # by the user: only the user resumes it
            assert await h.service.agent_restored(agent_id) == []
            assert (await h.record(schedule.id)).status == "paused"

    run(body)
