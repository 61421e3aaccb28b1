"""Loop records, shaped as the TypeScript daemon reports them (camelCase fields, its statuses).

A record is a plain JSON object: it is stored as is (the ``value`` of its plugin record) and
answered as is on the wire, so the two never drift apart. Fields this daemon adds beyond the
TypeScript ones: ``rerunAfterRestart`` on an iteration (the iteration a daemon restart
interrupted was started again, which happens once at most); on a loop an agent started through
the MCP tools,
``startedByAgentId`` (that agent), ``workerModeId``/``verifierModeId`` (the modes its agents
start in, never above the starting agent's) and ``agentLabels`` (labels its agents carry, which
make them the starting agent's children). A loop a person started has them ``null``.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

LOOP_STATUSES = ("running", "succeeded", "failed", "stopped")
ITERATION_STATUSES = ("running", "succeeded", "failed", "stopped")
FINISHED = frozenset({"succeeded", "failed", "stopped"})

MAX_LOGS = 500
"""Log entries kept per loop (the oldest go first): a long loop's record stays small."""

MAX_OUTPUT = 4000
"""Characters of a check's stdout/stderr kept (the end, where the error usually is)."""

Loop = dict[str, Any]


def now() -> str:
    """ISO 8601 UTC with milliseconds and ``Z``, as the TypeScript daemon writes times."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_loop(
    *,
    prompt: str,
    cwd: str,
    name: str | None,
    provider: str,
    model: str | None,
    verifier_provider: str | None,
    verifier_model: str | None,
    verify_prompt: str | None,
    verify_checks: list[str],
    archive: bool,
    sleep_ms: int,
    max_iterations: int | None,
    max_time_ms: int | None,
    started_by: str | None = None,
    worker_mode: str | None = None,
    verifier_mode: str | None = None,
    agent_labels: dict[str, str] | None = None,
) -> Loop:
    created = now()
    loop_id = secrets.token_hex(4)
    return {
        "id": loop_id,
        "name": name or f"loop-{loop_id}",
        "prompt": prompt,
        "cwd": cwd,
        "provider": provider,
        "model": model,
        "workerProvider": None,
        "workerModel": None,
        "verifierProvider": verifier_provider,
        "verifierModel": verifier_model,
        "verifyPrompt": verify_prompt,
        "verifyChecks": list(verify_checks),
        "archive": archive,
        "sleepMs": sleep_ms,
        "maxIterations": max_iterations,
        "maxTimeMs": max_time_ms,
        "status": "running",
        "createdAt": created,
        "updatedAt": created,
        "startedAt": created,
        "completedAt": None,
        "stopRequestedAt": None,
        "iterations": [],
        "logs": [],
        "nextLogSeq": 1,
        "activeIteration": None,
        "activeWorkerAgentId": None,
        "activeVerifierAgentId": None,
        "startedByAgentId": started_by,
        "workerModeId": worker_mode,
        "verifierModeId": verifier_mode,
        "agentLabels": dict(agent_labels) if agent_labels else None,
    }


def new_iteration(index: int) -> dict[str, Any]:
    return {
        "index": index,
        "workerAgentId": None,
        "workerStartedAt": now(),
        "workerCompletedAt": None,
        "verifierAgentId": None,
        "status": "running",
        "workerOutcome": None,
        "failureReason": None,
        "verifyChecks": [],
        "verifyPrompt": None,
        "rerunAfterRestart": False,
    }


def add_log(
    loop: Loop,
    text: str,
    *,
    iteration: int | None = None,
    source: str = "loop",
    level: str = "info",
) -> None:
    seq = int(loop.get("nextLogSeq") or 1)
    loop["logs"].append(
        {
            "seq": seq,
            "timestamp": now(),
            "iteration": iteration,
            "source": source,
            "level": level,
            "text": text,
        }
    )
    loop["nextLogSeq"] = seq + 1
    del loop["logs"][:-MAX_LOGS]
    loop["updatedAt"] = now()


def summary(loop: Loop) -> dict[str, Any]:
    """The ``loop/list`` entry."""
    keys = ("id", "name", "status", "cwd", "createdAt", "updatedAt", "activeIteration")
    return {key: loop.get(key) for key in keys}


def tail(text: str, limit: int = MAX_OUTPUT) -> str:
    return text if len(text) <= limit else text[-limit:]
