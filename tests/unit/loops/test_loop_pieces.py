"""The loop plugin's pieces that need no daemon: checks run with ``sh -c`` (bounded, their
process group killed), the verifier's verdict, the worker's feedback, durations, the store."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

import psutil
import pytest
from paseo_hookspecs.atomic import atomic_write_json
from paseo_loops.checks import run_check
from paseo_loops.cli import duration_ms
from paseo_loops.records import MAX_LOGS, add_log, new_iteration, new_loop
from paseo_loops.service import LoopService, parse_verdict, worker_prompt
from paseo_loops.store import LoopStore
from paseo_store_json._plugin_records import JsonPluginRecordStore


def test_a_check_passes_on_exit_0_in_the_loop_cwd(tmp_path: Path) -> None:
    (tmp_path / "done.txt").write_text("x")
    result = asyncio.run(run_check("test -f done.txt && pwd", str(tmp_path)))
    assert (result["exitCode"], result["passed"]) == (0, True)
    assert result["stdout"].strip() == str(tmp_path)


def test_a_failing_check_records_its_exit_code_and_output(tmp_path: Path) -> None:
    result = asyncio.run(run_check("echo out; echo err >&2; exit 7", str(tmp_path)))
    assert (result["exitCode"], result["passed"]) == (7, False)
    assert (result["stdout"], result["stderr"]) == ("out\n", "err\n")


def test_a_check_over_its_time_is_killed_with_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = asyncio.run(
        run_check(f"sleep 60 & echo $! > {pid_file}; wait", str(tmp_path), timeout=1.0)
    )
    assert (result["exitCode"], result["passed"]) == (None, False)
    assert "timed out" in result["stderr"]
    child = int(pid_file.read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


def test_a_check_in_a_missing_directory_fails_with_a_reason(tmp_path: Path) -> None:
    result = asyncio.run(run_check("true", str(tmp_path / "gone")))
    assert result["passed"] is False
    assert "could not run the check" in result["stderr"]


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ('{"passed": true}', (True, "approved")),
        ('Looked.\n{"passed": false, "reason": "no tests"}', (False, "no tests")),
        ('```json\n{"passed": true, "reason": "fine"}\n```', (True, "fine")),
    ],
)
def test_a_verdict_is_read_from_the_verifiers_json(answer: str, verdict: tuple[bool, str]) -> None:
    assert parse_verdict(answer) == verdict


@pytest.mark.parametrize("answer", [None, "", "looks good to me", '{"passed": "yes"}'])
def test_an_answer_without_a_verdict_rejects(answer: str | None) -> None:
    passed, reason = parse_verdict(answer)
    assert passed is False
    assert reason.startswith("the verifier gave no verdict")


def test_the_next_worker_hears_why_the_previous_iteration_failed() -> None:
    assert worker_prompt("do it", None, 1) == "do it"
    assert worker_prompt("do it", "Verify check failed: make", 3) == (
        "do it\n\nThe previous attempt (iteration 2) did not pass: Verify check failed: make"
    )


@pytest.mark.parametrize(
    ("text", "ms"),
    [("500ms", 500), ("2", 2000), ("1.5s", 1500), ("10m", 600_000), ("1h", 3_600_000)],
)
def test_durations(text: str, ms: int) -> None:
    assert duration_ms(text) == ms


def test_a_bad_duration_is_a_usage_error() -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        duration_ms("soon")


def _loop() -> dict[str, object]:
    return new_loop(
        prompt="p",
        cwd="/tmp",
        name=None,
        provider="claude",
        model=None,
        verifier_provider=None,
        verifier_model=None,
        verify_prompt=None,
        verify_checks=["true"],
        archive=False,
        sleep_ms=0,
        max_iterations=2,
        max_time_ms=None,
    )


def test_logs_are_bounded_and_numbered_on() -> None:
    loop = _loop()
    for n in range(MAX_LOGS + 10):
        add_log(loop, f"line {n}")
    logs = loop["logs"]
    assert isinstance(logs, list)
    assert len(logs) == MAX_LOGS
    assert logs[0]["seq"] == 11
    assert loop["nextLogSeq"] == MAX_LOGS + 11


def test_the_legacy_file_reads_back_and_sets_aside_a_corrupt_file(tmp_path: Path) -> None:
    # loops/loops.json is read once, to move its loops into the store (test_loop_records.py).
    store = LoopStore(tmp_path)
    loop = _loop()
    store.directory.mkdir()
    atomic_write_json(store.path, {"loops": [loop]})
    assert store.load() == [loop]
    assert json.loads(store.path.read_text())["loops"][0]["id"] == loop["id"]
    store.path.write_text("{not json")
    assert store.load() == []
    assert (tmp_path / "loops" / "loops.json.corrupt").read_text() == "{not json"


@pytest.mark.parametrize(("status", "level"), [("succeeded", "info"), ("failed", "error")])
def test_an_iteration_s_end_is_logged_at_a_typescript_level(
    tmp_path: Path, status: str, level: str
) -> None:
    # The TypeScript LoopLogEntrySchema knows only "info" and "error": the TypeScript clients
    # drop a whole loop record holding any other level.
    records = JsonPluginRecordStore(tmp_path).collection("loops", "loops")
    service = LoopService(records, agents=None)  # type: ignore[arg-type]
    loop = new_loop(
        prompt="p",
        cwd=str(tmp_path),
        name=None,
        provider="claude",
        model=None,
        verifier_provider=None,
        verifier_model=None,
        verify_prompt=None,
        verify_checks=["true"],
        archive=False,
        sleep_ms=0,
        max_iterations=1,
        max_time_ms=None,
    )
    iteration = new_iteration(1)
    loop["iterations"].append(iteration)
    service._loops[loop["id"]] = loop
    asyncio.run(
        service._end_iteration(loop, iteration, status, None if status == "succeeded" else "no")
    )
    assert loop["logs"][-1]["level"] == level
