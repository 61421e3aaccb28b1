"""The orchestration skills Paseo ships: ``bundled/<name>/`` package data (``SKILL.md`` and
any file beside it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable


def digest(data: bytes) -> str:
    """The content hash the manifests record."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class BundledSkill:
    """One skill as Paseo ships it."""

    name: str
    description: str
    files: dict[str, bytes]
    """Relative POSIX path → content; always has ``SKILL.md``."""

    def digests(self) -> dict[str, str]:
        return {path: digest(data) for path, data in self.files.items()}


def _description(skill_md: bytes) -> str:
    """The ``description:`` of the SKILL.md front matter (empty when it has none)."""
    lines = skill_md.decode("utf-8", "replace").splitlines()
    if not lines or lines[0].strip() != "---":
        return ""
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, _, value = line.partition(":")
        if key.strip() == "description":
            return value.strip()
    return ""


def _files(directory: Traversable, prefix: str = "") -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if entry.name.startswith((".", "__")):
            continue
        if entry.is_dir():
            found.update(_files(entry, f"{prefix}{entry.name}/"))
        else:
            found[prefix + entry.name] = entry.read_bytes()
    return found


def bundled_skills() -> dict[str, BundledSkill]:
    """Every shipped skill by name, sorted."""
    root = resources.files("paseo.skills").joinpath("bundled")
    skills: dict[str, BundledSkill] = {}
    for directory in sorted(root.iterdir(), key=lambda e: e.name):
        if not directory.is_dir() or directory.name.startswith((".", "__")):
            continue
        files = _files(directory)
        if "SKILL.md" in files:
            skills[directory.name] = BundledSkill(
                directory.name, _description(files["SKILL.md"]), files
            )
    return skills
