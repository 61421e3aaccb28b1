"""Advice the CLI adds to a daemon's answer when the daemon cannot know what would help.

A provider reports that its program "was not found" on the PATH the daemon was started with;
a user who has just installed it has it on their own PATH, and is puzzled. The daemon cannot see
the user's shell, the CLI can: it says that the daemon keeps the PATH it started with, and when
the program is on the CLI's own PATH, where.
"""

from __future__ import annotations

import re
import shutil

_NOT_FOUND = re.compile(r"'([^'\s]{1,200})' was not found")


def program_not_found(message: str | None) -> str | None:
    """The hint for a "'PROGRAM' was not found" ``message``, or ``None`` for any other."""
    match = _NOT_FOUND.search(message or "")
    if match is None:
        return None
    program = match.group(1)
    here = shutil.which(program)
    where = (
        f"{program!r} is on this shell's PATH ({here}) but not on the daemon's"
        if here
        else f"if you installed {program!r} after the daemon started"
    )
    return (
        f"the daemon looks programs up on the PATH it was started with; {where}: "
        "run `paseo daemon restart`"
    )
