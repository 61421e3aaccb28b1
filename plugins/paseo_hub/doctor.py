"""``paseo doctor``'s Hub check: the relationship as the running daemon holds it, or as
``hub-relationship.json`` records it while the daemon is stopped; the record holds the
relationship's credential, so it must be 0600 and the user's."""

from __future__ import annotations

import json
import os
import shlex
import stat
from typing import Any

from paseo_hookspecs.doctor import DoctorFinding, DoctorScope
from paseo_hookspecs.errors import PaseoError

from paseo_hub.relationship import FILE_NAME

NAME = "hub relationship"
STATUS_METHOD = "hub.relationship.get_status"


def _record_findings(scope: DoctorScope) -> list[DoctorFinding]:
    path = scope.home / FILE_NAME
    try:
        info = path.lstat()
    except FileNotFoundError:
        return []
    quoted = shlex.quote(str(path))
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.getuid():
        return [
            DoctorFinding(
                FILE_NAME,
                "fail",
                f"{path} (the Hub credential) is owned by uid {info.st_uid}, not by you",
                f"chown {os.getuid()} {quoted} && chmod 600 {quoted}",
            )
        ]
    if mode & 0o077:
        return [
            DoctorFinding(
                FILE_NAME,
                "fail",
                f"{path} (the Hub credential) has mode {mode:04o}: other users can read it",
                f"chmod 600 {quoted}",
            )
        ]
    return [DoctorFinding(FILE_NAME, "ok", f"{path}: mode {mode:04o}, yours")]


def _recorded_state(scope: DoctorScope) -> DoctorFinding:
    path = scope.home / FILE_NAME
    try:
        document: Any = json.loads(path.read_bytes())
    except FileNotFoundError:
        return DoctorFinding(NAME, "ok", "no Hub relationship recorded")
    except (OSError, ValueError) as exc:
        return DoctorFinding(
            NAME,
            "fail",
            f"{path} cannot be read: {exc}",
            "`paseo hub disconnect --force` once the daemon runs, then connect again",
        )
    state = document.get("state") if isinstance(document, dict) else None
    origin = (document.get("relationship") or {}).get("hubOrigin") if state else None
    return DoctorFinding(
        NAME,
        "ok",
        f"recorded as {state or 'unknown'}"
        + (f" with {origin}" if origin else "")
        + " (the daemon is not running: it dials the Hub when it starts)",
    )


def _live(status: dict[str, Any]) -> DoctorFinding:
    state = status.get("state")
    origin = status.get("hubOrigin")
    where = f" with {origin}" if origin else ""
    error = status.get("lastError") or status.get("warning")
    if state == "not_connected":
        return DoctorFinding(
            NAME, "ok", "not connected to a Hub (`paseo hub connect URL --token TOKEN` enrolls)"
        )
    if state == "connected":
        return DoctorFinding(NAME, "ok", f"connected{where}")
    if state in ("connecting", "reconnecting"):
        return DoctorFinding(
            NAME,
            "warn",
            f"{state}{where}" + (f": {error}" if error else ""),
            "if it stays so, check the network to the Hub and `paseo hub status`",
        )
    if state == "revoked":
        return DoctorFinding(
            NAME,
            "warn",
            f"the Hub{where} revoked this daemon",
            "`paseo hub disconnect`, then `paseo hub connect URL --token TOKEN` with a new token",
        )
    return DoctorFinding(
        NAME,
        "warn",
        f"{state}{where}" + (f": {error}" if error else ""),
        "`paseo hub status`; `paseo hub disconnect --force` forgets a relationship the Hub "
        "cannot be told about",
    )


def check(scope: DoctorScope) -> list[DoctorFinding]:
    findings = _record_findings(scope)
    if not scope.daemon_running:
        return [_recorded_state(scope), *findings]
    try:
        status = scope.call(STATUS_METHOD, timeout=5.0)
    except PaseoError as exc:
        return [
            DoctorFinding(
                NAME,
                "fail",
                f"the daemon cannot tell the relationship's state: {exc.code}: {exc}",
                "`paseo hub status`; `$PASEO_HOME/daemon.log` has the details",
            ),
            *findings,
        ]
    except (OSError, TimeoutError) as exc:
        return [
            DoctorFinding(
                NAME, "fail", f"the daemon did not answer: {exc}", "`paseo daemon restart`"
            ),
            *findings,
        ]
    return [_live(status if isinstance(status, dict) else {}), *findings]
