"""Optional extras: a plugin or driver whose packages are not installed is unavailable, not broken.

A distribution marks an entry point that needs one of its extras the way packaging metadata
always allowed, ``local = "paseo_speech_local:LocalSpeechToText [speech]"``: the ``paseo``
distribution does so for the engines its ``speech`` extra carries, and a third-party plugin can
do the same. Before anything is imported, the extra's requirements (``Requires-Dist: …; extra ==
"speech"``) are looked up among the installed distributions; when one is missing the entry
point is listed as unavailable with the exact command that installs it, ``pip install
'paseo[speech]'``, and nothing of it is imported (an import would fail, or worse, fail later in
the middle of a request).

Why entry-point extras and not a list in the kernel: the kernel names no plugin, and the
metadata is there without importing anything (``paseo plugins list`` imports no driver).
setuptools warns that extras on entry points are "not recommended" (new publishing tools need not
write them), but reading them is still required of consumers, and no other field of installed
metadata says which entry point needs which extra.

Only the presence of each required distribution is checked, not its version, and a
requirement's environment markers other than ``extra == …`` are not evaluated: the extras
checked here name plain packages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata

_TARGET = re.compile(r"^(?P<target>[^\[]*?)\s*(?:\[(?P<extras>[^\]]*)\])?\s*$")
_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[(?P<extras>[^\]]*)\])?")
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*["'](?P<extra>[^"']+)["']""")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def split_target(value: str) -> tuple[str, tuple[str, ...]]:
    """An entry point's value as ``(module[:attribute], extras)``:
    ``"pkg.mod:Cls [speech]"`` -> ``("pkg.mod:Cls", ("speech",))``."""
    match = _TARGET.match(value)
    if match is None:  # pragma: no cover - the pattern matches every string
        return value.strip(), ()
    extras = tuple(e.strip() for e in (match["extras"] or "").split(",") if e.strip())
    return match["target"].strip(), extras


def install_command(distribution: str, extras: tuple[str, ...] | list[str]) -> str:
    """The command a user runs to install ``distribution`` with ``extras``."""
    return f"pip install '{distribution}[{','.join(extras)}]'"


@dataclass(frozen=True)
class MissingExtra:
    """Why an entry point is unavailable: the extras it needs and what of them is absent."""

    distribution: str
    extras: tuple[str, ...]
    missing: tuple[str, ...]
    """The required distributions that are not installed."""

    @property
    def command(self) -> str:
        return install_command(self.distribution, self.extras)

    @property
    def message(self) -> str:
        """What ``paseo plugins list``, the daemon's log and a refused request say."""
        names = ", ".join(self.missing)
        verb = "is" if len(self.missing) == 1 else "are"
        which = " and ".join(repr(e) for e in self.extras)
        return (
            f"unavailable: {names} {verb} not installed (the {which} extra of "
            f"{self.distribution}): {self.command}"
        )


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def missing_requirements(distribution: str, extras: tuple[str, ...]) -> list[str]:
    """The distributions ``distribution``'s ``extras`` require that are not installed
    (an extra naming another extra of the same distribution, ``paseo[speech]``, is followed)."""
    missing: list[str] = []
    seen: set[str] = set()
    pending = list(extras)
    try:
        requirements = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return []
    own = _normalize(distribution)
    while pending:
        extra = pending.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for requirement in requirements:
            spec, _, marker = requirement.partition(";")
            found = _EXTRA_MARKER.search(marker)
            parsed = _REQUIREMENT.match(spec)
            if found is None or found["extra"] != extra or parsed is None:
                continue
            name = parsed["name"]
            if _normalize(name) == own:
                pending.extend(e.strip() for e in (parsed["extras"] or "").split(",") if e.strip())
            elif not _installed(name) and name not in missing:
                missing.append(name)
    return missing


def missing_extra(distribution: str | None, extras: tuple[str, ...]) -> MissingExtra | None:
    """Why an entry point of ``distribution`` declaring ``extras`` cannot be used, or ``None``."""
    if not extras or distribution is None:
        return None
    missing = missing_requirements(distribution, extras)
    if not missing:
        return None
    return MissingExtra(distribution, extras, tuple(missing))
