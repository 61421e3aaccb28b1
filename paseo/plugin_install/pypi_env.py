"""Installing wheels into the daemon's own environment with the running interpreter.

A ``pypi`` plugin is not a directory: it becomes an installed distribution whose ``paseo`` entry
points the loader finds. pip runs as ``sys.executable -m pip`` with a constraints file pinning
``paseo`` to the running version, so a plugin can never upgrade or downgrade Paseo under the
daemon. Only wheels are installed (``--only-binary :all:``): building an sdist runs code.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from importlib import metadata
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams

from paseo import __version__
from paseo.plugin_install._proc import run

PIP_TIMEOUT = 900.0
"""Seconds one pip run may take (dependency downloads can be slow, never unbounded)."""

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def distribution_of(remote: str) -> str | None:
    """The distribution a recorded requirement or wheel path names."""
    if remote.endswith(".whl"):
        return normalize(Path(remote).name.split("-")[0])
    match = _NAME.match(remote)
    return normalize(match[1]) if match else None


def installed_version(distribution: str) -> str | None:
    """Version of ``distribution`` in this environment (metadata only), ``None`` if absent."""
    importlib.invalidate_caches()
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


async def _pip(python: str, args: list[str], scratch: Path, inherit: tuple[int, ...]) -> None:
    completed = await run(
        [python, "-m", "pip", *args, "--disable-pip-version-check"],
        cwd=scratch,
        time_limit=PIP_TIMEOUT,
        inherit=inherit,
    )
    if completed.returncode != 0:
        tail = completed.stderr.strip()[-2000:]
        raise InvalidParams(f"pip {args[0]} failed: {tail}")


async def install_wheel(
    python: str, wheel: Path, *, restore: bool = False, inherit: tuple[int, ...] = ()
) -> None:
    """Install ``wheel`` (and its dependencies) into the environment of ``python``.

    ``restore`` reinstalls a previously active wheel exactly, without touching dependencies.
    ``inherit``: file descriptors pip keeps open (see :func:`paseo.plugin_install._proc.run`).
    """
    constraints = wheel.parent / ".paseo-constraints.txt"
    await asyncio.to_thread(constraints.write_text, f"paseo=={__version__}\n", "utf-8")
    args = ["install", "--only-binary", ":all:", "--constraint", str(constraints)]
    if restore:
        args += ["--no-deps", "--force-reinstall"]
    try:
        await _pip(python, [*args, str(wheel)], wheel.parent, inherit)
    finally:
        await asyncio.to_thread(constraints.unlink, True)


async def uninstall(
    python: str, distribution: str, scratch: Path, *, inherit: tuple[int, ...] = ()
) -> None:
    """Remove ``distribution`` from the environment (nothing happens if it is absent)."""
    if await asyncio.to_thread(installed_version, distribution) is not None:
        await _pip(python, ["uninstall", "--yes", distribution], scratch, inherit)
