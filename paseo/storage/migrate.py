"""Copy every record of a home from one store driver to another, then prove the copy.

``paseo store migrate`` is the only caller. The home must not be served meanwhile: the daemon's
lock is taken for the whole run, so a daemon cannot start half-way through. Records move through
the repositories of :mod:`paseo_hookspecs.store` only, so any pair of drivers works. After the
copy both stores are read back in full and compared kind by kind, counts *and* contents (the
``dump_record`` form of every record), before ``config.json`` may be switched to the target.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs import STORE_GROUP
from paseo_hookspecs.errors import PaseoError, Unavailable
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    AgentRecord,
    ManagedProcessRecord,
    PluginSourceRecord,
    ProjectRecord,
    ScheduleRecord,
    WorkspaceLabelDefinition,
    WorkspaceRecord,
    dump_record,
)
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter, Page

from paseo.fs import atomic_write_json, read_json
from paseo.home import HomeBusy, HomeLayout, HomeLock

T = TypeVar("T")

KINDS = (
    "agents",
    "timelines",
    "schedules",
    "projects",
    "workspaces",
    "labels",
    "push_tokens",
    "managed_processes",
    "plugin_sources",
    "plugin_records",
)
"""Every kind of record a store holds, in report order."""

TIMELINE_CHUNK = 2000
"""Timeline entries read and appended per call, bounding memory for long timelines."""


class MigrationRefused(Exception):
    """The migration did not start: nothing was written."""


class CopyFailed(Exception):
    """A record could not be written to the target; the target holds a partial copy."""


class VerificationFailed(Exception):
    """The copy finished but the target does not hold exactly the source's records."""

    def __init__(self, message: str, report: MigrationReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass
class KindReport:
    """How one kind of record fared."""

    kind: str
    source: int = 0
    target: int = 0
    verified: bool = False
    mismatches: list[str] = field(default_factory=list)
    """Ids (or positions) of records that differ between the stores."""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "target": self.target,
            "verified": self.verified,
            "mismatches": self.mismatches,
        }


@dataclass
class MigrationReport:
    """The outcome of one migration."""

    home: Path
    source: str
    target: str
    kinds: list[KindReport]
    cleared: bool = False
    """Whether the target's previous records were deleted first (``force``)."""
    switched: bool = False
    """Whether ``config.json`` now selects the target driver."""

    @property
    def verified(self) -> bool:
        return bool(self.kinds) and all(kind.verified for kind in self.kinds)

    def to_json(self) -> dict[str, Any]:
        return {
            "home": str(self.home),
            "from": self.source,
            "to": self.target,
            "verified": self.verified,
            "cleared": self.cleared,
            "switched": self.switched,
            "kinds": [kind.to_json() for kind in self.kinds],
        }


# --- reading a whole store --------------------------------------------------------------------


async def _all_pages(fetch: Callable[[str | None], Awaitable[Page[T]]]) -> list[T]:
    items: list[T] = []
    cursor: str | None = None
    while True:
        page = await fetch(cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor


@dataclass
class _Contents:
    """Every record of a store except timelines (read per agent, in chunks)."""

    agents: list[AgentRecord]
    schedules: list[ScheduleRecord]
    projects: list[ProjectRecord]
    workspaces: list[WorkspaceRecord]
    labels: list[WorkspaceLabelDefinition]
    push_tokens: list[str]
    managed_processes: list[ManagedProcessRecord]
    plugin_sources: dict[str, PluginSourceRecord]
    plugin_records: dict[tuple[str, str, str], dict[str, Any]]
    """Plugins' own records, ``(namespace, collection, id)`` → value."""

    def is_empty(self) -> bool:
        return not any(
            (
                self.agents,
                self.schedules,
                self.projects,
                self.workspaces,
                self.labels,
                self.push_tokens,
                self.managed_processes,
                self.plugin_sources,
                self.plugin_records,
            )
        )

    def comparable(self) -> dict[str, dict[str, Any]]:
        """Per kind, each record's ``dump_record`` form keyed by a stable name.

        Listings with a defined order are keyed by position *and* id, so a reordering is a
        difference too; sets and maps are keyed by their identity.
        """
        return {
            "agents": _keyed(self.agents, lambda r: r.id),
            "schedules": _keyed(self.schedules, lambda r: r.id),
            "projects": _keyed(self.projects, lambda r: r.projectId),
            "workspaces": _keyed(self.workspaces, lambda r: r.workspaceId),
            "labels": _keyed(self.labels, lambda r: r.name),
            "push_tokens": {token: token for token in self.push_tokens},
            "managed_processes": {p.id: dump_record(p) for p in self.managed_processes},
            "plugin_sources": {k: dump_record(v) for k, v in self.plugin_sources.items()},
            "plugin_records": {"/".join(k): v for k, v in self.plugin_records.items()},
        }


def _keyed(records: list[Any], key: Callable[[Any], str]) -> dict[str, Any]:
    return {f"{index}:{key(record)}": dump_record(record) for index, record in enumerate(records)}


async def _read_contents(store: Store) -> _Contents:
    return _Contents(
        agents=await _all_pages(
            # Tombstones too: what is in the trash stays restorable after a migration.
            lambda c: store.agents.list(
                AgentFilter(include_archived=True, trashed=None), cursor=c, limit=MAX_PAGE_SIZE
            )
        ),
        schedules=await _all_pages(lambda c: store.schedules.list(cursor=c, limit=MAX_PAGE_SIZE)),
        projects=await _all_pages(
            lambda c: store.projects.list(include_archived=True, cursor=c, limit=MAX_PAGE_SIZE)
        ),
        workspaces=await _all_pages(
            lambda c: store.workspaces.list(include_archived=True, cursor=c, limit=MAX_PAGE_SIZE)
        ),
        labels=await store.labels.list(),
        push_tokens=await store.push_tokens.list(),
        managed_processes=await store.managed_processes.list(),
        plugin_sources=await store.plugin_sources.list(),
        plugin_records=await _read_plugin_records(store),
    )


async def _read_plugin_records(store: Store) -> dict[tuple[str, str, str], dict[str, Any]]:
    records = store.plugin_records
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    if records is None:
        return found
    for namespace, collection in await records.collections():
        repository = records.collection(namespace, collection)
        cursor: str | None = None
        while True:
            page = await repository.list(cursor=cursor, limit=MAX_PAGE_SIZE)
            for record in page.items:
                found[(namespace, collection, record.id)] = record.value
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    return found


# --- copying ----------------------------------------------------------------------------------


async def _clear(store: Store, contents: _Contents) -> None:
    """Delete every record ``contents`` lists from ``store`` (workspaces before labels, so a
    label delete has no assignments left to rewrite)."""
    now = datetime.now(UTC).isoformat()
    for agent in contents.agents:
        await store.agents.delete(agent.id)
    for schedule in contents.schedules:
        await store.schedules.delete(schedule.id)
    for workspace in contents.workspaces:
        await store.workspaces.delete(workspace.workspaceId)
    for project in contents.projects:
        await store.projects.delete(project.projectId)
    for label in contents.labels:
        await store.labels.delete(label.name, now=now)
    for token in contents.push_tokens:
        await store.push_tokens.remove(token)
    for process in contents.managed_processes:
        await store.managed_processes.delete(process.id)
    for plugin_id in contents.plugin_sources:
        await store.plugin_sources.delete(plugin_id)
    if contents.plugin_records and store.plugin_records is not None:
        for namespace, collection, record_id in contents.plugin_records:
            await store.plugin_records.collection(namespace, collection).delete(record_id)


async def _copy_project(target: Store, project: ProjectRecord) -> None:
    _stored, created = await target.projects.insert_if_root_free(project)
    if created:
        return
    # Legacy registries may hold several projects on one root, and the contract's only insert
    # refuses a root that an active project already has. Insert this one on a root no other
    # project can have (it embeds the unique id), then put its real root back: the record
    # arrives unchanged and in its place.
    data = dump_record(project)
    parked = ProjectRecord.model_validate(
        {**data, "rootPath": f"{project.rootPath}\0paseo-migrate:{project.projectId}"}
    )
    await target.projects.insert_if_root_free(parked)
    await target.projects.update(project.projectId, {"rootPath": project.rootPath})


async def _copy(source: Store, target: Store, contents: _Contents) -> None:
    """Copy ``contents`` and every agent's timeline."""
    for agent in contents.agents:
        await target.agents.insert(agent)
    for schedule in contents.schedules:
        await target.schedules.insert(schedule)
    for project in contents.projects:
        await _copy_project(target, project)
    for label in contents.labels:
        await target.labels.create(label.name, label.color)
    for workspace in contents.workspaces:
        await target.workspaces.insert(workspace)
    for token in contents.push_tokens:
        await target.push_tokens.add(token)
    for process in contents.managed_processes:
        await target.managed_processes.put(process)
    for plugin_id, plugin_source in contents.plugin_sources.items():
        await target.plugin_sources.put(plugin_id, plugin_source)
    if contents.plugin_records:
        if target.plugin_records is None:
            raise Unavailable(f"the {target.name} store driver keeps no plugin records")
        for (namespace, collection, record_id), value in contents.plugin_records.items():
            await target.plugin_records.collection(namespace, collection).put(record_id, value)
    for agent in contents.agents:
        after: int | None = None
        while chunk := await source.timeline.read(agent.id, after_seq=after, limit=TIMELINE_CHUNK):
            await target.timeline.append(chunk)
            after = chunk[-1].seq


# --- verifying --------------------------------------------------------------------------------


def _compare(kind: str, source: dict[str, Any], target: dict[str, Any]) -> KindReport:
    mismatches = sorted(
        key for key in source.keys() | target.keys() if source.get(key) != target.get(key)
    )
    return KindReport(
        kind=kind,
        source=len(source),
        target=len(target),
        verified=not mismatches,
        mismatches=mismatches,
    )


async def _compare_timelines(source: Store, target: Store, agents: list[AgentRecord]) -> KindReport:
    report = KindReport(kind="timelines")
    for agent in agents:
        after: int | None = None
        while True:
            theirs = await source.timeline.read(agent.id, after_seq=after, limit=TIMELINE_CHUNK)
            ours = await target.timeline.read(agent.id, after_seq=after, limit=TIMELINE_CHUNK)
            report.source += len(theirs)
            report.target += len(ours)
            if [dump_record(e) for e in theirs] != [dump_record(e) for e in ours]:
                report.mismatches.append(agent.id)
                break
            if not theirs:
                break
            after = theirs[-1].seq
    report.verified = not report.mismatches and report.source == report.target
    return report


async def _verify(source: Store, target: Store, contents: _Contents) -> list[KindReport]:
    copied = (await _read_contents(target)).comparable()
    original = contents.comparable()
    reports = {kind: _compare(kind, original[kind], copied[kind]) for kind in original}
    reports["timelines"] = await _compare_timelines(source, target, contents.agents)
    return [reports[kind] for kind in KINDS]


# --- the command ------------------------------------------------------------------------------


def open_driver(name: str, home: Path) -> Store:
    """An unopened instance of the store driver ``name`` on ``home``."""
    from paseo.plugins.drivers import load_driver

    driver = load_driver(STORE_GROUP, name)
    store: Store = driver(home, None)
    return store


def _raw_config(layout: HomeLayout) -> dict[str, Any]:
    """``config.json`` as a raw JSON object (``{}`` when absent)."""
    try:
        config: Any = read_json(layout.config)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise MigrationRefused(f"cannot read {layout.config}: {exc}") from exc
    if not isinstance(config, dict):
        raise MigrationRefused(f"{layout.config} is not a JSON object")
    return config


def switch_driver(layout: HomeLayout, driver: str) -> None:
    """Make ``config.json`` select ``driver``, changing nothing else in the file (atomically).

    The raw document is edited, not a parsed and re-serialized config, so keys this version
    would migrate or does not know stay exactly as they are.
    """
    from paseo.config.load import CONFIG_FILE_MODE

    config = _raw_config(layout)
    storage = config.get("storage")
    config["storage"] = {**(storage if isinstance(storage, dict) else {}), "driver": driver}
    atomic_write_json(layout.config, config, mode=CONFIG_FILE_MODE)


async def migrate_store(
    home: Path, source_name: str, target_name: str, *, force: bool = False, switch: bool = False
) -> MigrationReport:
    """Copy every record of ``home`` from ``source_name`` to ``target_name`` and verify it.

    Raises :class:`MigrationRefused` (nothing written) when a daemon serves the home, the drivers
    are the same, or the target already holds records and ``force`` is not set (with ``force``
    they are deleted first). Raises :class:`VerificationFailed` when the copy differs from the
    source; ``config.json`` is then left alone even with ``switch``.
    """
    from paseo.daemon.control import lock_is_held

    layout = HomeLayout(home)
    if source_name == target_name:
        raise MigrationRefused(f"--from and --to are both {source_name!r}")
    if not layout.root.is_dir():
        raise MigrationRefused(f"{layout.root} does not exist")
    if switch:
        _raw_config(layout)  # refuse up front rather than after the copy
    if lock_is_held(layout):
        raise MigrationRefused(
            f"a Paseo daemon is running on {layout.root}; stop it with `paseo daemon stop` first"
        )
    lock = HomeLock(layout.lock, layout.pid)
    try:
        lock.acquire()
    except HomeBusy as exc:
        raise MigrationRefused(str(exc)) from exc
    try:
        source = open_driver(source_name, layout.root)
        target = open_driver(target_name, layout.root)
        await source.open()
        try:
            await target.open()
            try:
                report = MigrationReport(layout.root, source_name, target_name, kinds=[])
                await _migrate_open(source, target, report, force=force)
            finally:
                await target.close()
        finally:
            await source.close()
        if not report.verified:
            raise VerificationFailed("the copy does not match the source", report)
        if switch:
            switch_driver(layout, target_name)
            report.switched = True
        return report
    finally:
        lock.release()


async def _migrate_open(
    source: Store, target: Store, report: MigrationReport, *, force: bool
) -> None:
    existing = await _read_contents(target)
    if not existing.is_empty():
        if not force:
            raise MigrationRefused(
                f"the {report.target!r} store already holds records; "
                "rerun with --force to replace them"
            )
        await _clear(target, existing)
        report.cleared = True
    contents = await _read_contents(source)
    try:
        await _copy(source, target, contents)
    except PaseoError as exc:
        raise CopyFailed(
            f"copying into the {report.target!r} store failed: {exc.message} ({exc.code}); "
            "it holds a partial copy: fix the cause and rerun with --force"
        ) from exc
    report.kinds = await _verify(source, target, contents)
