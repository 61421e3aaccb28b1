"""Open-time work of the JSON store (blocking; run in a worker thread).

Order matters: leftover temp files go first, then the label transaction is settled (before any
workspace or label is read into memory), then every collection loads, quarantining what cannot.
Agents are the exception: their index comes from the durable index file
(:mod:`paseo_store_json._index_file`) and their records are read by :func:`scan_agents` after
the store is serving (:mod:`paseo_store_json._keeper`).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from paseo_hookspecs.errors import StorageError
from paseo_hookspecs.records import (
    AGENTS_DIR,
    MANAGED_PROCESSES_DIR,
    PLUGIN_SOURCES_FILE,
    PROJECTS_FILE,
    PUSH_TOKENS_FILE,
    SCHEDULES_DIR,
    WORKSPACE_LABELS_FILE,
    WORKSPACE_LABELS_TRANSACTION_FILE,
    WORKSPACES_FILE,
    AgentRecord,
    CleanupItem,
    ManagedProcessRecord,
    PluginSource,
    PluginSourcesFile,
    ProjectRecord,
    ProjectsFile,
    PushTokensFile,
    WorkspaceLabelDefinition,
    WorkspaceLabelsFile,
    WorkspaceLabelTransaction,
    WorkspaceRecord,
    WorkspacesFile,
    dump_record,
)
from paseo_hookspecs.store import QuarantinedFile
from pydantic import BaseModel, TypeAdapter, ValidationError

from paseo_store_json._bulk import (
    agent_is_canonical,
    load_files,
    read_file,
    reader_pool,
    scan,
    scan_tree,
    torn_files,
)
from paseo_store_json._core import describe_validation_error
from paseo_store_json._files import (
    FileOps,
    cut_torn_tail,
    encode_json,
    quarantine,
    remove_temp_files,
)
from paseo_store_json._index import (
    AGENT_INDEX_FIELDS,
    SCHEDULE_INDEX_FIELDS,
    AgentRow,
    CleanupRow,
    PlainRow,
    Row,
    ScheduleRow,
)
from paseo_store_json._index_file import INDEX_FILE, read_hot

log = logging.getLogger("paseo.store.json")

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R", bound=Row)

TIMELINES_DIR = "timelines"
"""Per-agent append-only timelines, ``timelines/{agentId}.jsonl`` (Python Paseo only)."""

CLEANUP_DIR = "trash/cleanup"
"""The trash's cleanup queue, ``trash/cleanup/{itemId}.json`` (Python Paseo only)."""

SWEEP_FILE = "trash/sweep.json"
"""``{"lastSweepAt": ...}``: the last successful automatic trash sweep."""

_PLUGIN_SOURCE = TypeAdapter[Any](PluginSource)


@dataclass
class Loaded:
    """Everything a home holds, as loaded by :func:`load_home`."""

    agents: dict[str, AgentRow] = field(default_factory=dict)
    schedules: dict[str, ScheduleRow] = field(default_factory=dict)
    processes: dict[str, PlainRow] = field(default_factory=dict)
    cleanup: dict[str, CleanupRow] = field(default_factory=dict)
    projects: list[ProjectRecord] = field(default_factory=list)
    workspaces: list[WorkspaceRecord] = field(default_factory=list)
    labels: list[WorkspaceLabelDefinition] = field(default_factory=list)
    push: PushTokensFile = field(default_factory=PushTokensFile)
    plugin_sources: dict[str, Any] = field(default_factory=dict)
    quarantined: list[QuarantinedFile] = field(default_factory=list)
    agents_indexed: bool = False
    """Whether :attr:`agents` came from a usable durable index (else it is empty): only its
    hot rows (:func:`paseo_store_json._index_file.is_hot`), the rest loads after open."""


def load_home(home: Path, ops: FileOps) -> Loaded:
    """Clean, recover and load ``home``. Raises ``StorageError`` when the home cannot be read
    or the label transaction cannot be settled (serving would then be unsafe)."""
    try:
        _remove_leftovers(home)
        recover_label_transaction(home, ops)
        loaded = Loaded()
        indexed = read_hot(home)
        loaded.agents = indexed or {}
        loaded.agents_indexed = indexed is not None
        with _collector_paused():
            _load_record_files(home, loaded)
        finish_purges(home, ops, loaded)
        _load_collections(home, loaded)
        _recover_projects(home, loaded, ops)
        _cut_torn_timelines(home)
    except OSError as exc:
        raise StorageError(f"could not open the json store at {home}: {exc}") from exc
    return loaded


class _CollectorPause:
    """Pause the cyclic garbage collector while thousands of records are created.

    Every allocation batch otherwise triggers a collection that rescans the growing set of
    live records: a third of the cold-load time for 10,000 agents. Pauses are counted, so
    concurrent loads (several stores in one process) restore the collector only once, and
    only if it was enabled before the first pause.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0
        self._was_enabled = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._count == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._count += 1
        try:
            yield
        finally:
            with self._lock:
                self._count -= 1
                if self._count == 0 and self._was_enabled:
                    gc.enable()


_collector_paused = _CollectorPause()


def _remove_leftovers(home: Path) -> None:
    # Record directories (agents/*, schedules/, runtime/managed-processes/) are cleaned while
    # they are loaded, to scan them once.
    for directory in (home / "projects", home / TIMELINES_DIR, (home / INDEX_FILE).parent):
        remove_temp_files(directory)
    # The home root and plugins/ are shared with other writers: only our own targets' temps.
    remove_temp_files(home, target_names=frozenset({PUSH_TOKENS_FILE.name}))
    remove_temp_files(
        home / PLUGIN_SOURCES_FILE.parent, target_names=frozenset({PLUGIN_SOURCES_FILE.name})
    )
    sweep = Path(SWEEP_FILE)
    remove_temp_files(home / sweep.parent, target_names=frozenset({sweep.name}))


# --- label transaction recovery --------------------------------------------------------------


def recover_label_transaction(home: Path, ops: FileOps) -> None:
    """Settle ``workspace-labels.transaction.json`` as the data model prescribes.

    ``prepared``: the commit point was never reached, so the before-images are written back
    (catalog, and the label slice of each listed workspace) and the marker removed. Re-running
    this after a crash half-way is harmless: it writes the same images again.
    ``committed``: both data files already hold the after-images, and later registry writes
    may have changed them since; the files are loaded as they are and only the marker goes.
    An unreadable marker is refused: guessing its phase could undo or replay a label change.
    """
    marker = home / WORKSPACE_LABELS_TRANSACTION_FILE
    try:
        data = marker.read_bytes()
    except FileNotFoundError:
        return
    try:
        transaction = WorkspaceLabelTransaction.model_validate_json(data)
    except ValidationError as exc:
        raise StorageError(
            f"cannot determine the state of the workspace label transaction {marker} "
            f"({describe_validation_error(exc)}); inspect or remove it and restart",
        ) from exc
    if transaction.phase == "committed":
        try:
            ops.remove(marker)
        except OSError:
            # Harmless to leave: a committed marker is never replayed, only cleaned up.
            log.warning(
                "could not remove the committed label transaction %s", marker, exc_info=True
            )
        return
    log.warning("rolling back an interrupted workspace label change (%s)", marker)
    ops.write_bytes(
        home / WORKSPACE_LABELS_FILE,
        encode_json([dump_record(label) for label in transaction.beforeLabels]),
    )
    workspaces_path = home / WORKSPACES_FILE
    try:
        raw = json.loads(workspaces_path.read_bytes())
    except FileNotFoundError:
        raw = None
    except ValueError as exc:
        raise StorageError(
            f"cannot roll back the label transaction: {workspaces_path} is not JSON ({exc})"
        ) from exc
    if raw is not None:
        if not isinstance(raw, list):
            raise StorageError(
                f"cannot roll back the label transaction: {workspaces_path} is not an array"
            )
        # Rolled back on the raw JSON so that entries this version cannot validate survive.
        before = {state.workspaceId: state for state in transaction.beforeWorkspaces}
        for entry in raw:
            state = before.get(str(entry.get("workspaceId"))) if isinstance(entry, dict) else None
            if state is None:
                continue
            if state.labels is None:
                entry.pop("labels", None)
            else:
                entry["labels"] = list(state.labels)
            entry["updatedAt"] = state.updatedAt
        ops.write_bytes(workspaces_path, encode_json(raw))
    ops.remove(marker)


# --- one file per record ---------------------------------------------------------------------


def scan_agents(
    home: Path, stop: threading.Event, temp_before: float, quarantined: list[QuarantinedFile]
) -> dict[str, AgentRow]:
    """Every agent record's index row, read beside a serving store (blocking): temp files of
    writes begun after ``temp_before`` are left alone, files removed meanwhile skipped, and
    :class:`Stopped` raised soon after ``stop`` is set. Files quarantined are added to
    ``quarantined`` as they are moved."""
    rows: dict[str, AgentRow] = {}
    # The collector is not paused here: beside a serving daemon a pause would race the
    # daemon's own collector settings (it runs its start with the collector off).
    with reader_pool() as reader:
        load_files(
            home,
            reader,
            scan_tree(str(home / AGENTS_DIR), temp_before),
            AGENT_INDEX_FIELDS,
            AgentRow,
            kind="agent",
            into=rows,
            quarantined=quarantined,
            canonical=agent_is_canonical(),
            stop=stop,
        )
    return rows


def _load_record_files(home: Path, loaded: Loaded) -> None:
    quarantined = loaded.quarantined
    with reader_pool() as reader:
        load_files(
            home,
            reader,
            scan(str(home / SCHEDULES_DIR)),
            SCHEDULE_INDEX_FIELDS,
            ScheduleRow,
            kind="schedule",
            into=loaded.schedules,
            quarantined=quarantined,
        )
        load_files(
            home,
            reader,
            scan(str(home / MANAGED_PROCESSES_DIR)),
            ManagedProcessRecord,
            PlainRow,
            kind="managed process",
            into=loaded.processes,
            quarantined=quarantined,
        )
        load_files(
            home,
            reader,
            scan(str(home / CLEANUP_DIR)),
            CleanupItem,
            CleanupRow,
            kind="cleanup item",
            into=loaded.cleanup,
            quarantined=quarantined,
        )


def finish_purges(home: Path, ops: FileOps, loaded: Loaded) -> None:
    """Redo purges a crash interrupted. A purge's queued cleanup item is its commit point: the
    agent it names is removed after the item is durable, so a tombstone still on disk with the
    item's ``deletedAt`` is one whose purge committed, and its record and timeline go now."""
    for item in loaded.cleanup.values():
        held = loaded.agents.get(item.agentId)
        if held is None or held.deletedAt != item.deletedAt:
            continue
        ops.remove(Path(held.path))
        ops.remove(home / TIMELINES_DIR / f"{item.agentId}.jsonl")
        del loaded.agents[item.agentId]
        log.info("finished the interrupted purge of agent %s", item.agentId)


def find_agent(home: Path, agent_id: str) -> tuple[AgentRecord, str] | None:
    """The record of ``agent_id`` and its file, looked for in every cwd folder (blocking; the
    index does not know it yet). The canonical file wins over a stray copy; an unreadable one
    is left for the background check to quarantine."""
    name = f"{agent_id}.json"
    found: list[tuple[AgentRecord, str]] = []
    try:
        folders = list(os.scandir(home / AGENTS_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return None
    for folder in folders:
        path = os.path.join(folder.path, name)
        try:
            data = read_file(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        try:
            record = AgentRecord.model_validate_json(data)
        except ValidationError:
            continue
        if record.id == agent_id:
            found.append((record, path))
    canonical = agent_is_canonical()
    found.sort(key=lambda pair: not canonical(pair[0], pair[1]))
    return found[0] if found else None


# --- whole-file collections ------------------------------------------------------------------


def _read_optional(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _load_collections(home: Path, loaded: Loaded) -> None:
    loaded.projects = _load_array(
        home,
        home / PROJECTS_FILE,
        file_model=ProjectsFile,
        item_model=ProjectRecord,
        id_field="projectId",
        loaded=loaded,
    )
    loaded.workspaces = _load_array(
        home,
        home / WORKSPACES_FILE,
        file_model=WorkspacesFile,
        item_model=WorkspaceRecord,
        id_field="workspaceId",
        loaded=loaded,
    )
    # Duplicate label identities are kept readable (see WorkspaceLabelsFile); writers refuse
    # to add more.
    loaded.labels = _load_array(
        home,
        home / WORKSPACE_LABELS_FILE,
        file_model=WorkspaceLabelsFile,
        item_model=WorkspaceLabelDefinition,
        id_field=None,
        loaded=loaded,
    )
    loaded.plugin_sources = _load_plugin_sources(home, loaded)
    push_path = home / PUSH_TOKENS_FILE
    data = _read_optional(push_path)
    if data is not None:
        try:
            loaded.push = PushTokensFile.model_validate_json(data)
        except ValidationError as exc:
            loaded.quarantined.append(quarantine(home, push_path, describe_validation_error(exc)))


def _load_array(
    home: Path,
    path: Path,
    *,
    file_model: type[BaseModel],
    item_model: type[M],
    id_field: str | None,
    loaded: Loaded,
) -> list[M]:
    """Load a JSON-array file.

    A file that is not a JSON array is moved to quarantine (the collection starts empty). A
    valid array with some invalid entries keeps the valid ones; the original file is first
    copied to quarantine, because the next write of this collection rewrites it without the
    invalid entries. Until then the file on disk stays untouched.
    """
    data = _read_optional(path)
    if data is None:
        return []
    try:
        items: list[M] = file_model.model_validate_json(data).root  # type: ignore[attr-defined]
    except ValidationError:
        items = []
    else:
        if id_field is None or len({getattr(item, id_field) for item in items}) == len(items):
            return items
    try:
        raw = json.loads(data)
    except ValueError as exc:
        loaded.quarantined.append(quarantine(home, path, f"not valid JSON: {exc}"))
        return []
    if not isinstance(raw, list):
        loaded.quarantined.append(quarantine(home, path, "not a JSON array"))
        return []
    valid: list[M] = []
    seen: set[str] = set()
    problems: list[str] = []
    for index, entry in enumerate(raw):
        try:
            item = item_model.model_validate(entry)
        except ValidationError as exc:
            problems.append(f"[{index}] {describe_validation_error(exc)}")
            continue
        if id_field is not None:
            item_id = str(getattr(item, id_field))
            if item_id in seen:
                problems.append(f"[{index}] duplicate {id_field} {item_id}")
                continue
            seen.add(item_id)
        valid.append(item)
    reason = f"{len(problems)} invalid entries dropped at the next write: " + "; ".join(problems)
    loaded.quarantined.append(quarantine(home, path, reason, copy=True))
    return valid


def _recover_projects(home: Path, loaded: Loaded, ops: FileOps) -> None:
    """Give workspaces whose project record was lost to quarantine a recovered project.

    Without it the intact workspaces would be hidden as orphans (and removed when touched).
    Each recovered project is rebuilt from its workspaces: the shortest root among them, Git
    when any of them is a checkout, active while any of them is. The registry is written at
    once, so the workspaces stay listed across restarts; the original file stays in quarantine
    to be restored by hand.
    """
    projects_file = str(home / PROJECTS_FILE)
    if not any(item.original == projects_file for item in loaded.quarantined):
        return
    known = {project.projectId for project in loaded.projects}
    orphans: dict[str, list[WorkspaceRecord]] = {}
    for workspace in loaded.workspaces:
        if workspace.projectId not in known:
            orphans.setdefault(workspace.projectId, []).append(workspace)
    if not orphans:
        return
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    for project_id, workspaces in orphans.items():
        roots = [w.mainRepoRoot or w.worktreeRoot or w.cwd for w in workspaces]
        root = min(roots, key=lambda path: (len(path), path))
        active = [w for w in workspaces if w.archivedAt is None]
        archived = [w.archivedAt for w in workspaces if w.archivedAt is not None]
        project = ProjectRecord(
            projectId=project_id,
            rootPath=root,
            kind="git" if any(w.kind != "directory" for w in workspaces) else "non_git",
            displayName=os.path.basename(root.rstrip("/")) or root,
            createdAt=min(w.createdAt for w in workspaces),
            updatedAt=now,
            archivedAt=None if active else max(archived),
        )
        loaded.projects.append(project)
        log.warning(
            "recovered project %s (%s) from %d workspace(s): %s was quarantined",
            project_id,
            root,
            len(workspaces),
            projects_file,
        )
    ops.write_bytes(
        home / PROJECTS_FILE, encode_json([dump_record(row) for row in loaded.projects])
    )


def _load_plugin_sources(home: Path, loaded: Loaded) -> dict[str, Any]:
    path = home / PLUGIN_SOURCES_FILE
    data = _read_optional(path)
    if data is None:
        return {}
    try:
        return dict(PluginSourcesFile.model_validate_json(data).root)
    except ValidationError:
        pass
    try:
        raw = json.loads(data)
    except ValueError as exc:
        loaded.quarantined.append(quarantine(home, path, f"not valid JSON: {exc}"))
        return {}
    if not isinstance(raw, dict):
        loaded.quarantined.append(quarantine(home, path, "not a JSON object"))
        return {}
    valid: dict[str, Any] = {}
    problems: list[str] = []
    for plugin_id, entry in raw.items():
        try:
            valid[plugin_id] = _PLUGIN_SOURCE.validate_python(entry)
        except ValidationError as exc:
            problems.append(f"[{plugin_id}] {describe_validation_error(exc)}")
    reason = f"{len(problems)} invalid entries dropped at the next write: " + "; ".join(problems)
    loaded.quarantined.append(quarantine(home, path, reason, copy=True))
    return valid


def _cut_torn_timelines(home: Path) -> None:
    with reader_pool() as reader:
        torn = torn_files(reader, str(home / TIMELINES_DIR), ".jsonl")
    for path in torn:
        cut_torn_tail(Path(path))
