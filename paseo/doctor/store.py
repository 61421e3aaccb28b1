"""The store: records the daemon could not load (kept in ``$PASEO_HOME/quarantine``) and the
free space its atomic writes need."""

from __future__ import annotations

import shutil
from pathlib import Path

from paseo.doctor.model import Check, DoctorContext

GROUP = "store"

FAIL_FREE = 100 * 1024**2
"""Below this, writes (timelines, atomic replacements of records) are about to fail."""
WARN_FREE = 1024**3


def _existing(path: Path) -> Path:
    """``path`` or its nearest existing parent (a home not made yet lives on its parent's
    file system)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _size(count: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024:
            return f"{count:.0f} {unit}"
        count //= 1024
    return f"{count} TiB"


def checks(context: DoctorContext) -> list[Check]:
    from paseo.home.quarantine import list_quarantine

    results: list[Check] = []
    entries = list_quarantine(context.home) if context.home.is_dir() else []
    if entries:
        names = ", ".join(sorted({entry.original.name for entry in entries})[:5])
        results.append(
            Check(
                GROUP,
                "quarantine",
                "warn",
                f"{len(entries)} file(s) could not be loaded and are in "
                f"{context.home / 'quarantine'} ({names}): what they held is missing from "
                "every listing",
                "`paseo store quarantine ls` shows them; `paseo store quarantine restore PATH` "
                "(daemon stopped) after repairing one, `paseo store quarantine rm PATH` to drop it",
            )
        )
    else:
        results.append(Check(GROUP, "quarantine", "ok", "no quarantined records"))
    where = _existing(context.home)
    usage = shutil.disk_usage(where)
    found = f"{_size(usage.free)} free on the file system of {where}"
    if usage.free < FAIL_FREE:
        results.append(
            Check(GROUP, "free disk", "fail", found, f"free space on the disk of {where}")
        )
    elif usage.free < WARN_FREE:
        results.append(
            Check(GROUP, "free disk", "warn", found, f"free space on the disk of {where}")
        )
    else:
        results.append(Check(GROUP, "free disk", "ok", found))
    return results
