"""Which programs a terminal can start: ``daemon.terminalProfiles`` and its defaults.

``daemon.terminalProfiles`` is a whole-list field. Absent means the defaults: the user's shell
followed by the profiles provider plugins contribute for their agent programs (a
:class:`ProfileSource`); ``[]`` means the user removed them all; a list means exactly those, in
that order.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Sequence
from typing import Protocol

from paseo_hookspecs.terminals import TerminalProfile

PROMPT_SENTINEL = "{{{prompt}}}"
"""Where a typed prompt goes in a profile's arguments."""

SHELL_PROFILE_ID = "shell"


class ProfileSource(Protocol):
    """Default profiles contributed by provider plugins (for their agent programs)."""

    def __call__(self) -> list[TerminalProfile]: ...


def no_provider_profiles() -> list[TerminalProfile]:
    """The :class:`ProfileSource` until providers contribute terminal profiles."""
    return []


def user_shell() -> str:
    """``$SHELL``, else the login shell of the daemon's user, else ``/bin/sh``."""
    shell = os.environ.get("SHELL")
    if shell:
        return shell
    try:
        return pwd.getpwuid(os.getuid()).pw_shell or "/bin/sh"
    except KeyError:
        return "/bin/sh"


def shell_profile() -> TerminalProfile:
    return TerminalProfile(id=SHELL_PROFILE_ID, name="Shell", command=user_shell(), args=[])


def effective_profiles(
    configured: Sequence[TerminalProfile] | None, *, providers: ProfileSource = no_provider_profiles
) -> list[TerminalProfile]:
    """The profiles in force: ``configured`` is the resolved ``daemon.terminalProfiles``, where
    ``None`` (the key is absent) means the shell plus every provider's own profile."""
    if configured is None:
        return [shell_profile(), *providers()]
    return list(configured)


def argv_for(profile: TerminalProfile, prompt: str | None) -> list[str]:
    """The command line of ``profile``: the prompt replaces :data:`PROMPT_SENTINEL`, and
    arguments holding the sentinel are dropped whole when there is no prompt."""
    args: list[str] = []
    for arg in profile.args or []:
        if PROMPT_SENTINEL not in arg:
            args.append(arg)
        elif prompt is not None:
            args.append(arg.replace(PROMPT_SENTINEL, prompt))
    return [profile.command, *args]
