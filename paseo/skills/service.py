"""The ``skills`` kernel service: Paseo's orchestration skills in the user's skill directories.

The shipped skills (:mod:`paseo.skills.bundle`) go into the shared ``~/.agents/skills`` (Codex
discovers it) and Claude's ``~/.claude/skills``, as ``agents.skills.selection`` says: missing
means every skill, ``{mode: custom, skills: [...]}`` only those. Copies in ``~/.codex/skills``
are retired: the shared directory replaced them. What is installed is never stored; it is read
from the files on every call (:func:`paseo.skills.install.state`).

One serialized owner: every read and every convergence runs under one lock, in a worker
thread, so two syncs (the one at start and a client's) never interleave their writes, and a
listing never sees a half-done sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from paseo.skills.bundle import BundledSkill, bundled_skills
from paseo.skills.install import Action, SkillState, install, retire, state

if TYPE_CHECKING:
    from paseo.services import ConfigView

log = logging.getLogger("paseo.skills")

INSTALL_TARGETS = {"agents": Path(".agents/skills"), "claude": Path(".claude/skills")}
"""Where selected skills are installed, relative to the home directory."""
LEGACY_TARGETS = {"codex": Path(".codex/skills")}
"""Where earlier copies are retired from, relative to the home directory."""


@dataclass(frozen=True)
class SkillStatus:
    name: str
    description: str
    selected: bool
    states: dict[str, SkillState]
    """Target name (``agents``, ``claude``, ``codex``) → what its directory holds."""


@dataclass(frozen=True)
class SkillsReport:
    skills: list[SkillStatus]
    unknown: list[str] = field(default_factory=list)
    """Names the custom selection lists that Paseo does not ship."""
    actions: list[Action] = field(default_factory=list)


class SkillsService:
    """See the module docstring."""

    name = "skills"

    def __init__(self, *, config: ConfigView, home_dir: Path) -> None:
        self._config = config
        self._home = home_dir
        self._lock = asyncio.Lock()
        self._startup: asyncio.Task[None] | None = None

    def roots(self) -> dict[str, Path]:
        return {
            name: self._home / relative
            for name, relative in {**INSTALL_TARGETS, **LEGACY_TARGETS}.items()
        }

    def _selection(self, shipped: dict[str, BundledSkill]) -> tuple[set[str], list[str]]:
        from paseo.config.models import CustomSkills

        selection = self._config.resolved.agents.skills.selection
        if not isinstance(selection, CustomSkills):
            return set(shipped), []
        wanted = list(dict.fromkeys(selection.skills))
        return {n for n in wanted if n in shipped}, [n for n in wanted if n not in shipped]

    async def start(self) -> None:
        """Converge once, in the background: the daemon does not wait for the files."""
        self._startup = asyncio.get_running_loop().create_task(self._converge_at_start())

    async def _converge_at_start(self) -> None:
        try:
            report = await self.sync()
        except OSError as exc:
            log.warning("could not install the Paseo skills: %s", exc)
            return
        changed = [a for a in report.actions if a.action != "kept"]
        # Debug only: a line in daemon.log after "ready" would be the daemon writing to its
        # home when nothing happened there.
        log.debug("skills: %d file(s) changed at start", len(changed))

    async def stop(self) -> None:
        if self._startup is not None:
            self._startup.cancel()
            # Anything but the cancellation (a bug) propagates: the daemon logs it.
            with contextlib.suppress(asyncio.CancelledError):
                await self._startup

    async def list_skills(self) -> SkillsReport:
        """Every shipped skill with what each directory holds."""
        async with self._lock:
            return await asyncio.to_thread(self._report, [])

    async def sync(self) -> SkillsReport:
        """Converge the directories to the selection; the report lists what changed."""
        async with self._lock:
            return await asyncio.to_thread(self._converge)

    def _converge(self) -> SkillsReport:
        shipped = bundled_skills()
        selected, _ = self._selection(shipped)
        roots = self.roots()
        actions: list[Action] = []
        for skill in shipped.values():
            for target in INSTALL_TARGETS:
                if skill.name in selected:
                    actions += install(skill, roots[target], target)
                else:
                    actions += retire(skill, roots[target], target)
            for target in LEGACY_TARGETS:
                actions += retire(skill, roots[target], target)
        return self._report(actions, shipped)

    def _report(
        self, actions: list[Action], shipped: dict[str, BundledSkill] | None = None
    ) -> SkillsReport:
        shipped = shipped if shipped is not None else bundled_skills()
        selected, unknown = self._selection(shipped)
        roots = self.roots()
        return SkillsReport(
            skills=[
                SkillStatus(
                    skill.name,
                    skill.description,
                    skill.name in selected,
                    {target: state(skill, root) for target, root in roots.items()},
                )
                for skill in shipped.values()
            ],
            unknown=unknown,
            actions=actions,
        )
