"""Contributes two ``paseo doctor`` checks: one reporting what it sees of the scope, one that
raises (the doctor must name it and carry on)."""

from __future__ import annotations

from paseo_hookspecs import hookimpl
from paseo_hookspecs.doctor import DoctorCheck, DoctorFinding, DoctorScope
from paseo_hookspecs.registration import DoctorCheckRegistrar


def _sees(scope: DoctorScope) -> list[DoctorFinding]:
    marker = scope.home / "checktest-marker"
    if marker.exists():
        return [DoctorFinding("marker", "ok", f"{marker} exists")]
    return [
        DoctorFinding(
            "marker",
            "fail",
            f"{marker} is missing (daemon running: {scope.daemon_running})",
            f"touch {marker}",
        )
    ]


def _raises(scope: DoctorScope) -> list[DoctorFinding]:
    raise RuntimeError("checktest broke on purpose")


@hookimpl
def paseo_register_doctor_checks(register: DoctorCheckRegistrar) -> None:
    register(DoctorCheck("checktest", _sees))
    register(DoctorCheck("checktest-broken", _raises))
