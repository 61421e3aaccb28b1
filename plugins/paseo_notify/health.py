"""How the sinks are doing, for people: the ``notify`` line of ``paseo daemon status`` and the
``notifications`` group of ``paseo doctor``.

A sink is *failing* when its last attempt failed (its last error is newer than its last
delivery) or it is disabled (an unusable secret file). A sink that failed once and delivered
since is fine: the counters keep the history, the headline says what needs a person now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paseo_hookspecs.doctor import DoctorFinding, DoctorScope
from paseo_hookspecs.errors import PaseoError, Unavailable
from paseo_hookspecs.status import StatusReport

FIX = "see the sink's error; `paseo logs --daemon` has each attempt (docs/notifications.md)"


def failing(sink: Mapping[str, Any]) -> str | None:
    """Why ``sink`` (one ``notify.status`` entry) needs attention now, or ``None``."""
    if sink.get("disabled"):
        return f"disabled: {sink['disabled']}"
    error, error_at, sent_at = (
        sink.get("lastError"),
        sink.get("lastErrorAt"),
        sink.get("lastSentAt"),
    )
    if error and (sent_at is None or (error_at is not None and error_at > sent_at)):
        return (
            f"failing: {error} ({sink.get('failed', 0)} failed, {sink.get('dropped', 0)} dropped)"
        )
    return None


def report(enabled: bool, sinks: Sequence[Mapping[str, Any]]) -> StatusReport:
    details: dict[str, Any] = {"enabled": enabled, "sinks": list(sinks)}
    if not enabled:
        return StatusReport("off", "notifications are turned off", details)
    if not sinks:
        return StatusReport("off", "no sink declared (daemon.notifications)", details)
    bad = [(sink["name"], why) for sink in sinks if (why := failing(sink)) is not None]
    sent = sum(int(sink.get("sent", 0)) for sink in sinks)
    if bad:
        named = "; ".join(f"{name} {why}" for name, why in bad)
        return StatusReport("warn", f"{len(bad)} of {len(sinks)} sink(s) {named}", details)
    return StatusReport("ok", f"{len(sinks)} sink(s), {sent} sent", details)


def doctor_findings(scope: DoctorScope) -> list[DoctorFinding]:
    """One finding per sink of the running daemon (what it delivered, what failed)."""
    if not scope.daemon_running:
        return [
            DoctorFinding(
                "sinks",
                "ok",
                "not checked: the daemon is not running (deliveries are counted by it)",
            )
        ]
    try:
        status = scope.call("notify.status")
    except Unavailable as error:
        return [DoctorFinding("sinks", "warn", f"the daemon did not answer: {error}", FIX)]
    except PaseoError as error:
        return [DoctorFinding("sinks", "warn", f"notify.status failed: {error}", FIX)]
    sinks = status.get("sinks") or [] if isinstance(status, dict) else []
    if not status.get("enabled", True):
        return [DoctorFinding("sinks", "ok", "notifications are turned off")]
    if not sinks:
        return [DoctorFinding("sinks", "ok", "no sink declared (daemon.notifications)")]
    findings = []
    for sink in sinks:
        name = f"sink {sink.get('name')}"
        why = failing(sink)
        if why is None:
            findings.append(
                DoctorFinding(name, "ok", f"{sink.get('type')}: {sink.get('sent', 0)} sent")
            )
        else:
            findings.append(DoctorFinding(name, "warn", f"{sink.get('type')} {why}", FIX))
    return findings
