"""The ``pypi`` source: fetch one wheel of a Python distribution.

Spec: ``pypi:<requirement>`` (``pypi:paseo-hello>=1.2``) or ``pypi:<absolute path to a .whl>``.
Only a wheel is accepted (``--only-binary :all:``): building an sdist would run the package's
build code before it was verified. The wheel is kept in the destination; installing it into the
daemon's environment, constrained to the running Paseo version, is the kernel's step after
verification, so this source never touches the environment.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

from paseo_plugin_sources._process import run
from paseo_plugin_sources._safety import check_wheel

_PREFIX = "pypi:"


def split_spec(spec: str) -> str:
    """The requirement or wheel path of a ``pypi:`` spec."""
    if not spec.startswith(_PREFIX):
        raise InvalidParams(f"not a pypi spec: {spec!r}")
    target = spec[len(_PREFIX) :].strip()
    if not target:
        raise InvalidParams("pypi source: a requirement is required")
    return target


def _wheel_version(wheel: Path) -> str | None:
    # Wheel file names are {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl.
    parts = wheel.name.removesuffix(".whl").split("-")
    return parts[1] if len(parts) >= 5 else None


def _copy_local(source: Path, target: Path) -> None:
    if not source.is_file():
        raise InvalidParams(f"wheel {source} does not exist")
    shutil.copyfile(source, target)


def _single_wheel(destination: Path, target: str) -> Path:
    wheels = sorted(destination.glob("*.whl"))
    if len(wheels) != 1:
        raise InvalidParams(f"expected one wheel for {target!r}, found {len(wheels)}")
    check_wheel(wheels[0])
    return wheels[0]


class PypiSource(PluginSource):
    """Plugins published as Python wheels (see the module docstring for the spec)."""

    kind = "pypi"

    def matches(self, spec: str) -> bool:
        """``pypi:…`` specs."""
        return spec.startswith(_PREFIX)

    async def prepare(self, spec: str, destination: Path) -> PreparedPlugin:
        """Download (or copy) the wheel into ``destination`` and check its entries."""
        target = split_spec(spec)
        if target.endswith(".whl") and os.path.isabs(target):
            source = Path(target)
            await asyncio.to_thread(_copy_local, source, destination / source.name)
        else:
            await run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--only-binary",
                    ":all:",
                    "--disable-pip-version-check",
                    "--dest",
                    str(destination),
                    target,
                ],
                cwd=destination,
            )
        wheel = await asyncio.to_thread(_single_wheel, destination, target)
        return PreparedPlugin(path=destination, revision=_wheel_version(wheel), remote=target)
