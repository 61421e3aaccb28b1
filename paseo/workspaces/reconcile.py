"""Reconciliation: keep Git-derived facts of projects and workspaces current.

Every active project root and every active workspace cwd is observed (empty projects too). A
pass is cheap when nothing changed: each observed location is reduced to a stat signature of the
few files its facts depend on (the ``.git`` entry, ``HEAD`` of its git dir, ``config`` of its
common dir; for a non-Git directory the directory itself), and only a location whose signature
moved is re-read, in-process with dulwich. No pass ever starts a git process.

Passes run at boot (which also backfills missing ``projectKey`` values) and then periodically;
:meth:`Reconciler.trigger` asks for an early full pass (after a worktree was created, say).
Between periodic passes, filesystem events (:mod:`paseo.workspaces.watch`) on the directories
holding ``HEAD`` and ``config`` (or on a non-Git directory itself) run a partial pass over just
the locations whose files changed. The periodic pass stays as the fallback: it catches what
events miss (a ``.git`` file rewritten, a watch that could not be placed) and is all there is when
watching is unavailable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Collection
from dataclasses import dataclass, field

from paseo_hookspecs.errors import PaseoError

from paseo.git.facts import RepoFacts, read_facts, stat_signature
from paseo.projects.service import ProjectRegistry
from paseo.workspaces.provisioning import WorkspaceProvisioningService
from paseo.workspaces.watch import LocationWatcher, WatchSet, build_watch_set

log = logging.getLogger("paseo.workspaces.reconcile")

DEFAULT_INTERVAL = 2.0
"""Seconds between periodic (full) passes; filesystem events start partial passes sooner."""

Signature = tuple[tuple[int, int, int, int] | None, ...]


@dataclass
class _Watch:
    paths: tuple[str, ...]
    signature: Signature
    events: tuple[str, ...]
    """Files whose filesystem events ask for a re-check of this location."""


@dataclass
class PassStats:
    """What one pass did."""

    observed: int = 0
    read: int = 0
    """Locations whose facts were re-read (their signature moved)."""
    updated: list[str] = field(default_factory=list)
    """Ids of the records that changed."""


def _watch_paths(location: str, facts: RepoFacts | None) -> tuple[str, ...]:
    if facts is None:
        # A new .git (git init, clone) changes the directory's own stat.
        return (location, os.path.join(location, ".git"))
    return facts.watch_files


def _event_files(location: str, facts: RepoFacts | None) -> tuple[str, ...]:
    # HEAD and config only: a rewritten ``.git`` file (worktree repair) is left to the periodic
    # pass, since noticing it would mean watching the working tree's root.
    if facts is None:
        return (os.path.join(location, ".git"),)
    return (os.path.join(facts.git_dir, "HEAD"), os.path.join(facts.common_dir, "config"))


def _read(location: str) -> RepoFacts | None:
    return read_facts(location) if os.path.isdir(location) else None


class Reconciler:
    """See the module docstring."""

    def __init__(
        self,
        projects: ProjectRegistry,
        workspaces: WorkspaceProvisioningService,
        *,
        interval: float = DEFAULT_INTERVAL,
    ) -> None:
        self.projects = projects
        self.workspaces = workspaces
        self.interval = interval
        self._watches: dict[str, _Watch] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._pass_lock = asyncio.Lock()
        self._full_requested = False
        self._dirty: set[str] = set()
        """Location keys filesystem events named since the last pass."""
        self._events: dict[str, tuple[str, ...]] = {}
        """The event files the watcher was last given, per location key."""
        self.watcher = LocationWatcher(self._on_change)

    async def start(self, *, watch: bool = True) -> None:
        """Boot reconciliation (``projectKey`` backfill, a full pass), then the periodic loop
        and (unless ``watch`` is false, for a caller that starts it later with
        ``watcher.start()``) the file watcher."""
        try:
            filled = await self.projects.backfill_project_keys()
            if filled:
                log.info("backfilled projectKey on %d project(s)", filled)
            await self.reconcile_once(force=True)
        except PaseoError as exc:
            log.warning("boot reconciliation failed: %s", exc.message)
        self._task = asyncio.create_task(self._loop(), name="paseo-reconcile")
        if watch:
            self.watcher.start()

    async def stop(self) -> None:
        """Stop the file watcher and the periodic loop."""
        await self.watcher.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def trigger(self) -> None:
        """Run the next pass now rather than at the end of the interval."""
        self._full_requested = True
        self._wake.set()

    def _on_change(self, keys: set[str]) -> None:
        self._dirty |= keys
        self._wake.set()

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        # A deadline rather than a per-wait timeout: a steady stream of events must not keep
        # postponing the full pass that is the fallback for what events miss.
        due = loop.time() + self.interval
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.0, due - loop.time()))
            self._wake.clear()
            keys, self._dirty = self._dirty, set()
            full = self._full_requested or loop.time() >= due
            self._full_requested = False
            try:
                if full:
                    due = loop.time() + self.interval
                    await self.reconcile_once()
                elif keys:
                    await self._pass(force=False, only=keys)
            except PaseoError as exc:
                log.warning("reconciliation pass failed: %s", exc.message)
            except Exception:
                log.exception("reconciliation pass failed")

    def _scan(
        self, locations: dict[str, str], force: bool, partial: bool
    ) -> tuple[dict[str, RepoFacts | None], WatchSet | None]:
        """Blocking: the facts of every existing location whose signature moved (all when
        ``force``), and the new watch set when the files to watch changed. A ``partial`` scan
        covers only some locations, so it forgets none of the others.

        A signature is always taken *before* the read it vouches for, so a change landing
        between the two is either seen by this read or moves the signature for the next pass.
        """
        changed: dict[str, RepoFacts | None] = {}
        for key, location in locations.items():
            watch = self._watches.get(key)
            if watch is not None:
                signature = stat_signature(watch.paths)
                if signature == watch.signature and not force:
                    continue
                facts = _read(location)
                paths = _watch_paths(location, facts)
                if paths != watch.paths:
                    signature = stat_signature(paths)
                    facts = _read(location)
            else:
                paths = _watch_paths(location, _read(location))
                signature = stat_signature(paths)
                facts = _read(location)
            self._watches[key] = _Watch(paths, signature, _event_files(location, facts))
            # A vanished directory says nothing about Git; a deleted checkout keeps the
            # placement its restore needs.
            if os.path.isdir(location):
                changed[key] = facts
        if not partial:
            for key in set(self._watches) - set(locations):
                del self._watches[key]
        events = {key: watch.events for key, watch in self._watches.items()}
        if events == self._events:
            return changed, None
        self._events = events
        return changed, build_watch_set(events)

    async def reconcile_once(self, *, force: bool = False) -> PassStats:
        """One pass over every active project and workspace; see the module docstring."""
        return await self._pass(force=force, only=None)

    async def _pass(self, *, force: bool, only: Collection[str] | None) -> PassStats:
        """A pass over the active locations, or over those of them keyed in ``only``."""
        async with self._pass_lock:
            projects = {p.projectId: p for p in await self.projects.list()}
            workspaces = {w.workspaceId: w for w in await self.workspaces.list()}
            locations = {f"p:{pid}": p.rootPath for pid, p in projects.items()}
            locations.update(
                {f"w:{wid}": w.cwd for wid, w in workspaces.items() if w.projectId in projects}
            )
            if only is not None:
                locations = {key: path for key, path in locations.items() if key in only}
            changed, watch_set = await asyncio.to_thread(
                self._scan, locations, force, only is not None
            )
            if watch_set is not None:
                self.watcher.update(watch_set)
            stats = PassStats(observed=len(locations), read=len(changed))
            for key, facts in changed.items():
                kind, _, ident = key.partition(":")
                if kind == "p":
                    project = projects[ident]
                    if await self.projects.refresh(project, facts) is not project:
                        stats.updated.append(ident)
                else:
                    workspace = workspaces[ident]
                    if await self.workspaces.refresh(workspace, facts) is not workspace:
                        stats.updated.append(ident)
            return stats
