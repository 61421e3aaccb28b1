"""Loops run by the real daemon with the real Claude Code against the fake model server,
driven through the real ``paseo loop`` CLI.

A worker that writes the file its check looks for ends the loop ``succeeded`` after one
iteration (its write asks for permission, as a loop worker's does in the TypeScript daemon, and
is allowed with ``paseo permit allow``); a check that never passes ends the loop ``failed`` at
``--max-iterations``, the check's result and the failure reason in the next worker's prompt; a
verifier's rejection reaches the next worker; ``loop stop`` stops a loop asleep between
iterations; a daemon killed with SIGKILL mid-iteration runs that iteration again, once, at its
next start.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, poll, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

LOOP_TIMEOUT = TURN_TIMEOUT * 3


def start(daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path) -> Path:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    work = tmp_path / "work"
    work.mkdir()
    return work


def run_loop(daemon: RealDaemon, work: Path, prompt: str, *options: str) -> dict[str, Any]:
    loop: dict[str, Any] = json.loads(
        daemon.cli(
            "loop",
            "run",
            prompt,
            "--provider",
            "claude",
            "--cwd",
            str(work),
            *options,
            "-o",
            "json",
        ).stdout
    )
    return loop


def inspect(daemon: RealDaemon, loop_id: str) -> dict[str, Any]:
    loop: dict[str, Any] = json.loads(daemon.cli("loop", "inspect", loop_id, "-o", "json").stdout)
    return loop


def finished(daemon: RealDaemon, loop_id: str) -> dict[str, Any] | None:
    loop = inspect(daemon, loop_id)
    return loop if loop["status"] != "running" else None


def log_texts(daemon: RealDaemon, loop_id: str) -> list[str]:
    entries = json.loads(daemon.cli("loop", "logs", loop_id, "-o", "json").stdout)
    return [entry["text"] for entry in entries]


def test_a_worker_that_makes_the_check_pass_ends_the_loop_succeeded(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    created = run_loop(
        daemon,
        work,
        "[[write:done.txt:finished]]",
        "--verify-check",
        "test -f done.txt",
        "--verify-check",
        "grep -q finished done.txt",
        "--max-iterations",
        "2",
        "--name",
        "writer",
    )
    assert created["status"] == "running"
    assert created["verifyChecks"] == ["test -f done.txt", "grep -q finished done.txt"]
    assert (created["maxIterations"], created["provider"]) == (2, "claude")

    # The worker's write asks, as any agent's in the default mode; a person allows it.
    def asking() -> bool:
        pending = json.loads(daemon.cli("permit", "ls", "-o", "json").stdout)
        return bool(pending)

    poll(asking, timeout=LOOP_TIMEOUT, what="the worker's permission request")
    worker = inspect(daemon, created["id"])["iterations"][0]["workerAgentId"]
    daemon.cli("permit", "allow", worker)

    loop = poll(lambda: finished(daemon, created["id"]), timeout=LOOP_TIMEOUT, what="the loop")
    assert loop["status"] == "succeeded"
    (only,) = loop["iterations"]
    assert (only["index"], only["status"], only["workerOutcome"]) == (1, "succeeded", "completed")
    assert [(c["command"], c["exitCode"], c["passed"]) for c in only["verifyChecks"]] == [
        ("test -f done.txt", 0, True),
        ("grep -q finished done.txt", 0, True),
    ]
    assert (work / "done.txt").read_text().strip() == "finished"
    assert loop["completedAt"] is not None
    assert loop["activeIteration"] is None

    listed = json.loads(daemon.cli("loop", "ls", "-o", "json").stdout)
    assert [(entry["id"], entry["status"]) for entry in listed] == [(loop["id"], "succeeded")]
    table = daemon.cli("loop", "ls").stdout
    assert "writer" in table
    assert "succeeded" in table
    shown = daemon.cli("loop", "inspect", "writer").stdout
    assert "pass:test -f done.txt" in shown
    texts = log_texts(daemon, "writer")
    assert texts[0] == f"Loop created in {work}"
    assert "Check 'test -f done.txt' passed." in texts

    # Stored through the configured store (the json driver: one file per loop, its value the
    # TypeScript daemon's loop record); the TypeScript layout, loops/loops.json, is only read,
    # to move an earlier home's loops in (tests/unit/loops/test_loop_records.py).
    records = daemon.home / "plugin-records" / "loops" / "loops"
    stored = [json.loads(path.read_text()) for path in sorted(records.glob("*.json"))]
    assert [(entry["id"], entry["value"]["status"]) for entry in stored] == [
        (loop["id"], "succeeded")
    ]
    assert not (daemon.home / "loops" / "loops.json").exists()


def test_a_check_that_never_passes_fails_the_loop_at_max_iterations(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    created = run_loop(
        daemon,
        work,
        "worker-task [[reply:nothing done]]",
        "--verify-check",
        "echo not yet >&2; exit 3",
        "--max-iterations",
        "2",
        "--sleep",
        "100ms",
        "--archive",
    )
    loop = poll(lambda: finished(daemon, created["id"]), timeout=LOOP_TIMEOUT, what="the loop")
    assert loop["status"] == "failed"
    assert [it["status"] for it in loop["iterations"]] == ["failed", "failed"]
    first = loop["iterations"][0]
    assert first["failureReason"] == "Verify check failed: echo not yet >&2; exit 3"
    (check,) = first["verifyChecks"]
    assert (check["exitCode"], check["passed"], check["stderr"]) == (3, False, "not yet\n")
    assert log_texts(daemon, created["id"])[-1] == "Reached max iterations (2)."

    # The second worker heard why the first attempt failed.
    prompts = [r.prompt for r in fake.model_requests() if "worker-task" in r.prompt]
    assert any("did not pass: Verify check failed" in prompt for prompt in prompts)
    # --archive: each iteration's worker is archived.
    workers = {it["workerAgentId"] for it in loop["iterations"]}
    agents = {a["id"]: a for a in json.loads(daemon.cli("ls", "-a", "-o", "json").stdout)}
    assert all(agents[w]["archivedAt"] for w in workers)


def test_a_verifier_rejection_reaches_the_next_worker(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    created = run_loop(
        daemon,
        work,
        "second-task [[reply:did my best]]",
        "--verify",
        'judge-it [[reply:{"passed": false, "reason": "the tests are missing"}]]',
        "--max-iterations",
        "2",
        "--sleep",
        "100ms",
    )
    loop = poll(lambda: finished(daemon, created["id"]), timeout=LOOP_TIMEOUT, what="the loop")
    assert loop["status"] == "failed"
    first, second = loop["iterations"]
    assert first["failureReason"] == "Verifier rejected: the tests are missing"
    assert first["verifyPrompt"]["passed"] is False
    assert first["verifierAgentId"] not in (None, first["workerAgentId"])
    assert first["verifyChecks"] == []
    # The verifier saw the worker's reply; the second worker heard the verifier's reasons.
    judged = [r.prompt for r in fake.model_requests() if "judge-it" in r.prompt]
    assert any("did my best" in prompt for prompt in judged)
    workers = [
        r.prompt
        for r in fake.model_requests()
        if "second-task" in r.prompt and "judge-it" not in r.prompt
    ]
    assert any("did not pass: Verifier rejected: the tests are missing" in p for p in workers)
    assert second["status"] == "failed"


def test_stop_ends_a_loop_whose_worker_runs_and_one_asleep(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    busy = run_loop(daemon, work, "[[slow:300]]", "--verify-check", "true")

    def working() -> str | None:
        iterations = inspect(daemon, busy["id"])["iterations"]
        return iterations[0]["workerAgentId"] if iterations else None

    worker = poll(working, timeout=LOOP_TIMEOUT, what="the worker")
    stopped = json.loads(daemon.cli("loop", "stop", busy["id"], "-o", "json").stdout)
    assert stopped["status"] == "stopped"
    assert stopped["stopRequestedAt"] is not None
    (only,) = stopped["iterations"]
    assert (only["status"], only["verifyChecks"]) == ("stopped", [])
    agent = json.loads(daemon.cli("inspect", worker, "-o", "json").stdout)["agent"]
    assert agent["lastStatus"] != "running"

    # Asleep between iterations: stopped, while its finished iteration stays failed.
    asleep = run_loop(daemon, work, "[[reply:no]]", "--verify-check", "false", "--sleep", "60s")

    def slept() -> dict[str, Any] | None:
        loop = inspect(daemon, asleep["id"])
        done = [it for it in loop["iterations"] if it["status"] == "failed"]
        return loop if done else None

    poll(slept, timeout=LOOP_TIMEOUT, what="the first iteration to fail")
    stopped = json.loads(daemon.cli("loop", "stop", asleep["id"], "-o", "json").stdout)
    assert stopped["status"] == "stopped"
    assert [it["status"] for it in stopped["iterations"]] == ["failed"]
    statuses = {
        e["id"]: e["status"] for e in json.loads(daemon.cli("loop", "ls", "-o", "json").stdout)
    }
    assert statuses == {busy["id"]: "stopped", asleep["id"]: "stopped"}


def test_a_daemon_killed_mid_iteration_reruns_that_iteration_once(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    marker = work / "attempts"
    # Each worker turn streams for about 10 s ("chunk 1" to "chunk 50", 0.2 s apart), so a kill
    # lands in the middle of one. Not with a reply text: the fake drops the empty pieces of a
    # text shorter than the chunks asked for ("slow" streamed as 4 pieces, under a second).
    created = run_loop(
        daemon,
        work,
        "[[slow:50:0.2]]",
        "--verify-check",
        f"echo x >> {marker}",
        "--max-iterations",
        "3",
    )

    def working() -> dict[str, Any] | None:
        loop = inspect(daemon, created["id"])
        iterations = loop["iterations"]
        if iterations and iterations[-1]["workerAgentId"]:
            return loop
        return None

    cut = poll(working, timeout=LOOP_TIMEOUT, what="a worker in progress")
    first_worker = cut["iterations"][0]["workerAgentId"]
    daemon.kill()
    daemon.start()

    def rerunning() -> dict[str, Any] | None:
        (iteration,) = inspect(daemon, created["id"])["iterations"]
        if iteration["rerunAfterRestart"] and iteration["workerAgentId"] not in (
            None,
            first_worker,
        ):
            return iteration
        return None

    rerun = poll(rerunning, timeout=LOOP_TIMEOUT, what="the interrupted iteration's rerun")
    # Killed again during the rerun: never a third run of it; the loop goes on to iteration 2.
    daemon.kill()
    assert rerun["index"] == 1
    assert rerun["status"] == "running"
    daemon.start()
    assert any("running it again" in text for text in log_texts(daemon, created["id"]))
    loop = poll(lambda: finished(daemon, created["id"]), timeout=LOOP_TIMEOUT, what="the loop")
    assert loop["status"] == "succeeded"
    assert len(loop["iterations"]) == 2, "\n".join(log_texts(daemon, created["id"]))
    first, second = loop["iterations"]
    assert (first["status"], first["failureReason"]) == (
        "failed",
        "interrupted twice by a daemon restart",
    )
    assert first["workerAgentId"] == rerun["workerAgentId"]
    assert (second["index"], second["status"], second["rerunAfterRestart"]) == (
        2,
        "succeeded",
        False,
    )
    assert marker.read_text() == "x\n"  # the checks ran once: in iteration 2


def test_a_clean_daemon_restart_mid_iteration_resumes_the_loop(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path
) -> None:
    work = start(daemon, fake, tmp_path)
    # The worker streams "chunk 1" to "chunk 100" 0.2 s apart, about 20 s: the stop (a CLI
    # call, then the daemon closing its connections before it cancels the loop) lands inside
    # it on a loaded machine too. A short reply text would be streamed as its characters only
    # (see the test above), over before the stop.
    created = run_loop(daemon, work, "[[slow:100:0.2]]", "--verify-check", "true", "--name", "calm")

    def working() -> str | None:
        iterations = inspect(daemon, created["id"])["iterations"]
        return iterations[0]["workerAgentId"] if iterations else None

    first_worker = poll(working, timeout=LOOP_TIMEOUT, what="a worker in progress")
    daemon.stop()
    daemon.start()
    loop = poll(lambda: finished(daemon, created["id"]), timeout=LOOP_TIMEOUT, what="the loop")
    # The shutdown closing the worker is not the iteration's outcome: it is run again, once.
    assert loop["status"] == "succeeded"
    (only,) = loop["iterations"]
    assert (only["rerunAfterRestart"], only["workerOutcome"]) == (True, "completed")
    assert only["workerAgentId"] != first_worker
    # A finished loop's name may be used again.
    again = run_loop(daemon, work, "[[reply:hi]]", "--verify-check", "true", "--name", "calm")
    assert inspect(daemon, "calm")["id"] == again["id"]
