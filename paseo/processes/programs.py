"""An external program's path and version, found the way the daemon would run it.

Shared by ``paseo doctor`` (its git and provider rows) and the daemon's
``provider.diagnostic`` (what the app's provider settings show): both ask the same
questions of the same program, so they give the same answer.
"""

from __future__ import annotations

import shutil
import subprocess

VERSION_WAIT = 5.0
"""Seconds a ``--version`` may take before the program counts as not answering."""


def program_version(program: str, env: dict[str, str] | None = None) -> tuple[str | None, str]:
    """``(path, first line of `program --version`)``; the path is ``None`` when not on PATH,
    the text then says so; a program that fails or hangs says that instead of a version."""
    path = shutil.which(program, path=(env or {}).get("PATH"))
    if path is None:
        return None, f"{program!r} is not on PATH"
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_WAIT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return path, f"`{program} --version` did not answer within {VERSION_WAIT:.0f}s"
    except OSError as exc:
        return path, f"`{program} --version` could not run: {exc.strerror or exc}"
    text = (done.stdout or done.stderr).strip().splitlines()
    first = text[0].strip() if text else ""
    if done.returncode != 0:
        return path, f"`{program} --version` exited {done.returncode}: {first or 'no output'}"
    return path, first or "no version printed"
