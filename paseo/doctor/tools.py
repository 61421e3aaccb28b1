"""External programs Paseo drives itself: git (worktrees, diffs, checkouts)."""

from __future__ import annotations

from paseo.doctor.model import Check, DoctorContext
from paseo.processes.programs import program_version


def checks(context: DoctorContext) -> list[Check]:
    path, version = program_version("git", dict(context.env))
    if path is None:
        return [
            Check(
                "git",
                "git",
                "fail",
                version,
                "install git (e.g. `apt install git` or `brew install git`): worktrees, "
                "checkouts and diffs need it",
            )
        ]
    if not version.startswith("git version"):
        return [Check("git", "git", "fail", f"{path}: {version}", "reinstall git")]
    return [Check("git", "git", "ok", f"{version} ({path})")]
