"""Putting skills into skill directories and taking them out, without losing user work.

Each skill directory Paseo writes (``<root>/<name>/``) holds a manifest, :data:`MANIFEST`,
naming every file Paseo wrote there with the hash of what it wrote. That is what makes
"unchanged" decidable: a file whose content still has the recorded hash is Paseo's to replace
or remove; a file whose content differs is a user edit and stays; a file the manifest does not
name is untracked and stays. The manifest records what Paseo wrote, never whether a skill is
installed: that is always read from the files themselves.

Writes are atomic (:mod:`paseo.fs`). These functions block; the service runs them in a
worker thread, one call at a time.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from paseo.fs import atomic_write_bytes, atomic_write_json
from paseo.skills.bundle import BundledSkill, digest

MANIFEST = ".paseo-skill.json"

ActionKind = Literal["installed", "updated", "removed", "kept"]
SkillState = Literal["installed", "outdated", "modified", "missing"]


@dataclass(frozen=True)
class Action:
    """One file change (or a user file deliberately left alone: ``kept``)."""

    skill: str
    target: str
    path: str
    action: ActionKind


def _current(path: Path) -> str | None:
    try:
        return digest(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def read_manifest(skill_dir: Path) -> dict[str, str]:
    """Relative path → hash Paseo wrote. Permissive: unreadable or odd entries read as none."""
    try:
        raw = json.loads((skill_dir / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    files = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def _write_manifest(skill_dir: Path, files: dict[str, str]) -> None:
    target = skill_dir / MANIFEST
    if files:
        atomic_write_json(target, {"managedBy": "paseo", "files": dict(sorted(files.items()))})
    else:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()


def _prune_empty(directory: Path, stop: Path) -> None:
    """Remove ``directory`` and its parents up to (not including) ``stop`` while empty."""
    while directory != stop and directory.is_relative_to(stop):
        try:
            directory.rmdir()
        except OSError:
            return
        directory = directory.parent


def install(skill: BundledSkill, root: Path, target: str) -> list[Action]:
    """Make ``root/<name>/`` hold the shipped skill, keeping user edits and untracked files;
    files an earlier version wrote that this one no longer ships are removed if unchanged."""
    skill_dir = root / skill.name
    manifest = read_manifest(skill_dir)
    actions: list[Action] = []
    for rel, data in skill.files.items():
        path, want = skill_dir / rel, digest(data)
        current = _current(path)
        if current == want:
            manifest[rel] = want
            continue
        if current is not None and manifest.get(rel) != current:
            actions.append(Action(skill.name, target, str(path), "kept"))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, data)
        manifest[rel] = want
        actions.append(
            Action(skill.name, target, str(path), "installed" if current is None else "updated")
        )
    for rel in sorted(set(manifest) - set(skill.files)):
        actions += _remove_if_unchanged(skill.name, skill_dir, rel, manifest, target=target)
    _write_manifest(skill_dir, manifest)
    return actions


def retire(skill: BundledSkill, root: Path, target: str) -> list[Action]:
    """Take ``root/<name>/`` out: remove the files Paseo wrote that are unchanged — named in
    the manifest with their hash, or identical to what this version ships (a copy an earlier
    Paseo wrote without a manifest) — and leave everything else."""
    skill_dir = root / skill.name
    if not skill_dir.is_dir():
        return []
    manifest = read_manifest(skill_dir)
    shipped = skill.digests()
    actions: list[Action] = []
    for rel in sorted(set(manifest) | set(shipped)):
        actions += _remove_if_unchanged(
            skill.name, skill_dir, rel, manifest, target=target, shipped=shipped
        )
    _write_manifest(skill_dir, manifest)
    _prune_empty(skill_dir, root)
    return actions


def _remove_if_unchanged(
    name: str,
    skill_dir: Path,
    rel: str,
    manifest: dict[str, str],
    *,
    target: str,
    shipped: dict[str, str] | None = None,
) -> list[Action]:
    path = skill_dir / rel
    current = _current(path)
    if current is None:
        manifest.pop(rel, None)
        return []
    if current not in (manifest.get(rel), (shipped or {}).get(rel)):
        return [Action(name, target, str(path), "kept")] if rel in manifest else []
    path.unlink()
    manifest.pop(rel, None)
    _prune_empty(path.parent, skill_dir)
    return [Action(name, target, str(path), "removed")]


def state(skill: BundledSkill, root: Path) -> SkillState:
    """What ``root/<name>/`` holds, read from the files: ``installed`` (as shipped),
    ``outdated`` (an unchanged copy of an earlier version), ``modified`` (edited) or
    ``missing``."""
    skill_dir = root / skill.name
    if not (skill_dir / "SKILL.md").is_file():
        return "missing"
    manifest = read_manifest(skill_dir)
    differing = {
        rel: current
        for rel, want in skill.digests().items()
        if (current := _current(skill_dir / rel)) != want
    }
    if not differing:
        return "installed"
    if all(current is None or manifest.get(rel) == current for rel, current in differing.items()):
        return "outdated"
    return "modified"
