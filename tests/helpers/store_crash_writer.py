"""The child process of the store crash harness, and the write stream it performs.

``plan(seed, mode)`` is a deterministic list of store writes (JSON-ready operations); ``apply``
performs one on a store. Run as a script, this module opens a driver on a home and applies the
plan in order, printing ``ready`` once the store is open and ``ack <i>`` after write ``i``
returned (flushed, so the parent knows the write was acknowledged before it kills us)::

    python store_crash_writer.py DRIVER HOME SEED MODE

Modes: ``mixed`` (every kind of write), ``labels`` (mostly label renames, deletes and
assignments over many workspaces, so kills land inside label transactions), ``trash``
(agents with timelines moved to the trash, restored, purged into the cleanup queue, and queue
items retried and retired, so kills land inside purge transactions) and ``usage`` (turn ends:
timeline entries appended with their usage record, ``append_with_usage``).

With ``PASEO_CRASH_KILL_AT`` set to ``STEP:N`` the writer kills itself (SIGKILL) at the ``N``th
time the JSON driver reaches ``STEP`` of a turn end's write: ``timeline`` (the intent is
forced, the timeline append not begun), ``day`` (the timeline appended, the usage day file
not written: off the turn end's path, after its ack) or ``settle`` (the day file written, the
intent not cut off).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import types
import uuid
from pathlib import Path
from typing import Any

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    WORKSPACE_LABEL_COLORS,
    AgentRecord,
    CleanupItem,
    ManagedProcessRecord,
    PluginSourceRecord,
    ProjectRecord,
    ScheduleRecord,
    TimelineEntry,
    WorkspaceRecord,
)
from paseo_hookspecs.usage import UsageRecord
from pydantic import TypeAdapter

from paseo.testing.store_conformance import (
    agent_data,
    cleanup_item_data,
    iso,
    managed_process_data,
    plugin_source_data,
    project_data,
    schedule_data,
    timeline_entry_data,
    workspace_data,
)

Op = list[Any]
"""``[kind, *arguments]``, JSON-ready."""

MODES = ("mixed", "labels", "trash", "usage")

_PLUGIN_SOURCE: TypeAdapter[Any] = TypeAdapter(PluginSourceRecord)


class _Planner:
    """Tracks just enough of the state the plan builds to keep every write valid."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.ops: list[Op] = []
        self.clock = 0
        self.project_id = ""
        self.workspaces: list[tuple[str, str]] = []
        self.labels: list[str] = []
        self.agents: dict[str, list[int]] = {}  # id -> [title counter, next seq]
        self.schedules: list[str] = []
        self.trashed: dict[str, str] = {}  # id -> deletedAt
        self.plugin_records: list[tuple[str, str, str]] = []  # (namespace, collection, id)
        self.queued: list[str] = []

    def now(self) -> str:
        self.clock += 1
        return iso(self.clock)

    def hex_id(self, bits: int) -> str:
        return f"{self.rng.getrandbits(bits):0{bits // 4}x}"

    def add(self, *op: Any) -> None:
        self.ops.append(list(op))

    # -- writes ------------------------------------------------------------------------------

    def project(self) -> None:
        project_id = f"prj_{self.hex_id(64)}"
        root = f"/Users/alice/code/repo-{len(self.ops)}"
        self.add("project_insert", project_data(project_id, root=root, created_at=self.now()))
        self.project_id = self.project_id or project_id

    def workspace(self) -> None:
        workspace_id = f"wks_{self.hex_id(64)}"
        cwd = f"/Users/alice/code/repo/w{len(self.workspaces)}"
        record = workspace_data(
            workspace_id, project_id=self.project_id, cwd=cwd, created_at=self.now()
        )
        self.add("workspace_insert", record)
        self.workspaces.append((workspace_id, cwd))

    def workspace_update(self) -> None:
        workspace_id, _ = self.rng.choice(self.workspaces)
        now = self.now()
        self.add("workspace_update", workspace_id, {"title": f"title at {now}", "updatedAt": now})

    def label_create(self) -> None:
        name = f"Label {self.clock} {self.hex_id(16)}"
        self.add("label_create", name, self.rng.choice(WORKSPACE_LABEL_COLORS))
        self.now()
        self.labels.append(name)

    def label_rename(self) -> None:
        index = self.rng.randrange(len(self.labels))
        new_name = f"Renamed {self.clock} {self.hex_id(16)}"
        # Address the label by another spelling of the same identity half of the time.
        old = self.labels[index]
        target = old.upper() if self.rng.random() < 0.5 else old
        self.add("label_rename", target, new_name, self.now())
        self.labels[index] = new_name

    def label_recolour(self) -> None:
        name = self.rng.choice(self.labels)
        self.add("label_recolour", name, self.rng.choice(WORKSPACE_LABEL_COLORS), self.now())

    def label_delete(self) -> None:
        if len(self.labels) < 3:
            self.label_create()
            return
        name = self.labels.pop(self.rng.randrange(len(self.labels)))
        self.add("label_delete", name, self.now())

    def label_assign(self, names: int = 2) -> None:
        workspace_id, _ = self.rng.choice(self.workspaces)
        picked = self.rng.sample(self.labels, min(names, len(self.labels)))
        self.add("label_assign", workspace_id, picked, self.now())

    def label_unassign(self) -> None:
        workspace_id, _ = self.rng.choice(self.workspaces)
        self.add("label_unassign", workspace_id, [self.rng.choice(self.labels)], self.now())

    def agent_insert(self) -> None:
        agent_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        workspace_id, cwd = self.rng.choice(self.workspaces)
        record = agent_data(
            agent_id, cwd=cwd, workspace_id=workspace_id, created_at=self.now(), title="0"
        )
        self.add("agent_insert", record)
        self.agents[agent_id] = [0, 0]

    def agent_update(self) -> None:
        agent_id = self.rng.choice(sorted(self.agents))
        counter = self.agents[agent_id]
        changes = {
            "title": str(counter[0] + 1),
            "updatedAt": self.now(),
            "lastStatus": self.rng.choice(["idle", "running", "error", "closed"]),
        }
        self.add("agent_update", agent_id, changes, {"title": str(counter[0])})
        counter[0] += 1

    def agent_delete(self) -> None:
        agent_id = self.rng.choice(sorted(self.agents))
        del self.agents[agent_id]
        self.add("agent_delete", agent_id)

    def timeline_append(self) -> None:
        agent_id = self.rng.choice(sorted(self.agents))
        counter = self.agents[agent_id]
        count = self.rng.randint(1, 4)
        entries = [
            timeline_entry_data(agent_id, seq) for seq in range(counter[1], counter[1] + count)
        ]
        counter[1] += count
        self.add("timeline_append", entries)

    def turn_end(self) -> None:
        """A turn's last entries and its usage record, in one write."""
        agent_id = self.rng.choice(sorted(self.agents))
        counter = self.agents[agent_id]
        count = self.rng.randint(1, 3)
        entries = [
            timeline_entry_data(agent_id, seq) for seq in range(counter[1], counter[1] + count)
        ]
        counter[1] += count
        last = entries[-1]
        record = {
            "id": f"{agent_id}:{last['epoch']}:{last['seq']}",
            "at": last["timestamp"],
            "agentId": agent_id,
            "provider": "claude",
            "source": "loop",
            "sourceId": f"{agent_id}:{last['seq']}",
            "outcome": "completed",
            "inputTokens": self.rng.randint(1, 5000),
            "outputTokens": self.rng.randint(1, 500),
            "costUsd": self.rng.randint(1, 1000) / 1000,
        }
        self.add("turn_end", entries, [record])

    def agent_trash(self) -> None:
        live = sorted(set(self.agents) - set(self.trashed))
        if not live:
            self.agent_insert()
            return
        agent_id = self.rng.choice(live)
        self.trashed[agent_id] = self.now()
        self.add("agent_update", agent_id, {"deletedAt": self.trashed[agent_id]}, None)

    def agent_restore(self) -> None:
        if not self.trashed:
            self.agent_trash()
            return
        agent_id = self.rng.choice(sorted(self.trashed))
        deleted_at = self.trashed.pop(agent_id)
        self.add("agent_update", agent_id, {"deletedAt": None}, {"deletedAt": deleted_at})

    def agent_purge(self) -> None:
        if not self.trashed:
            self.agent_trash()
            return
        agent_id = self.rng.choice(sorted(self.trashed))
        deleted_at = self.trashed.pop(agent_id)
        del self.agents[agent_id]
        item = cleanup_item_data(agent_id, deleted_at, createdAt=self.now())
        self.add("trash_purge", agent_id, deleted_at, item)
        self.queued.append(item["id"])

    def cleanup_retry(self) -> None:
        if not self.queued:
            self.agent_purge()
            return
        self.add("cleanup_retry", self.rng.choice(self.queued), "busy", self.now())

    def cleanup_retire(self) -> None:
        if not self.queued:
            self.agent_purge()
            return
        self.add("cleanup_retire", self.queued.pop(self.rng.randrange(len(self.queued))))

    def sweep(self) -> None:
        self.add("trash_sweep", self.now())

    def schedule_insert(self) -> None:
        schedule_id = self.hex_id(32)
        self.add("schedule_insert", schedule_data(schedule_id, created_at=self.now(), runs=[]))
        self.schedules.append(schedule_id)

    def schedule_run(self) -> None:
        schedule_id = self.rng.choice(self.schedules)
        now = self.now()
        run = {
            "id": f"run-{self.rng.randrange(3)}",
            "scheduledFor": now,
            "startedAt": now,
            "endedAt": None,
            "status": "running",
            "agentId": None,
            "output": None,
            "error": None,
        }
        self.add("schedule_upsert_run", schedule_id, run, {"lastRunAt": now})

    def plugin_record(self) -> None:
        """Put a plugin record (new or replaced, up to ~20 kB) or delete one."""
        if self.plugin_records and self.rng.random() < 0.25:
            key = self.plugin_records.pop(self.rng.randrange(len(self.plugin_records)))
            self.add("plugin_record_delete", *key)
            return
        namespace = self.rng.choice(["loops", "chat"])
        key = (namespace, "items", f"r{self.rng.randrange(6)}")
        if key not in self.plugin_records:
            self.plugin_records.append(key)
        value = {"at": self.now(), "text": "x" * self.rng.randrange(20_000)}
        self.add("plugin_record_put", *key, value)

    def misc(self) -> None:
        choice = self.rng.randrange(3)
        if choice == 0:
            self.add("push_token_add", f"ExponentPushToken[{self.hex_id(32)}]")
        elif choice == 1:
            record_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
            self.add("managed_process_put", managed_process_data(record_id))
        else:
            kind = self.rng.choice(["git", "npm"])
            self.add(
                "plugin_source_put", f"plugin-{self.rng.randrange(4)}", plugin_source_data(kind)
            )


def plan(seed: int, mode: str) -> list[Op]:
    """The deterministic write stream of ``seed`` in ``mode`` (every write valid in order)."""
    p = _Planner(seed)
    p.project()
    if mode == "labels":
        for _ in range(16):
            p.workspace()
        for _ in range(5):
            p.label_create()
        for workspace_id, _ in p.workspaces:
            p.add("label_assign", workspace_id, p.rng.sample(p.labels, 3), p.now())
        steps = [
            (p.label_rename, 5),
            (p.label_assign, 2),
            (p.label_unassign, 1),
            (p.label_delete, 1),
            (p.label_create, 1),
            (p.label_recolour, 1),
            (p.workspace_update, 1),
        ]
        # Long enough that most kill points fall after the setup writes above.
        count = 100
    elif mode == "mixed":
        for _ in range(4):
            p.workspace()
        for _ in range(3):
            p.label_create()
        for _ in range(3):
            p.agent_insert()
        p.schedule_insert()
        steps = [
            (p.agent_insert, 3),
            (p.agent_update, 5),
            (p.timeline_append, 5),
            (p.agent_delete, 1),
            (p.project, 1),
            (p.workspace, 1),
            (p.workspace_update, 1),
            (p.label_rename, 2),
            (p.label_recolour, 1),
            (p.label_delete, 1),
            (p.label_create, 1),
            (p.label_assign, 2),
            (p.label_unassign, 1),
            (p.schedule_insert, 1),
            (p.schedule_run, 1),
            (p.misc, 2),
            (p.plugin_record, 2),
        ]
        count = 90
    elif mode == "trash":
        for _ in range(2):
            p.workspace()
        for _ in range(4):
            p.agent_insert()
        steps = [
            (p.agent_insert, 2),
            (p.timeline_append, 3),
            (p.agent_trash, 3),
            (p.agent_restore, 1),
            (p.agent_purge, 3),
            (p.cleanup_retry, 1),
            (p.cleanup_retire, 1),
            (p.sweep, 1),
            (p.agent_update, 1),
        ]
        count = 90
    elif mode == "usage":
        for _ in range(2):
            p.workspace()
        for _ in range(3):
            p.agent_insert()
        steps = [(p.turn_end, 6), (p.timeline_append, 2), (p.agent_insert, 1)]
        count = 60
    else:
        raise ValueError(f"unknown mode {mode!r}")
    actions = [action for action, weight in steps for _ in range(weight)]
    for _ in range(count):
        action = p.rng.choice(actions)
        few = len(p.agents) < 2
        if action in (p.agent_update, p.agent_delete, p.timeline_append, p.turn_end) and few:
            action = p.agent_insert
        action()
    return p.ops


async def apply(store: Store, op: Op) -> None:
    """Perform one planned write; an unexpected outcome raises."""
    kind, *args = op
    if kind == "agent_insert":
        assert await store.agents.insert(AgentRecord.model_validate(args[0]))
    elif kind == "agent_update":
        await store.agents.update(args[0], args[1], expect=args[2])
    elif kind == "agent_delete":
        assert await store.agents.delete(args[0])
    elif kind == "trash_purge":
        assert await store.trash.purge(args[0], deleted_at=args[1], item=CleanupItem(**args[2]))
    elif kind == "cleanup_retry":
        await store.trash.retry_later(args[0], error=args[1], at=args[2])
    elif kind == "trash_sweep":
        await store.trash.record_sweep(args[0])
    elif kind == "cleanup_retire":
        assert await store.trash.retire(args[0])
    elif kind == "timeline_append":
        await store.timeline.append([TimelineEntry.model_validate(e) for e in args[0]])
    elif kind == "turn_end":
        await store.timeline.append_with_usage(
            [TimelineEntry.model_validate(e) for e in args[0]],
            [UsageRecord.model_validate(r) for r in args[1]],
        )
    elif kind == "project_insert":
        _, created = await store.projects.insert_if_root_free(ProjectRecord.model_validate(args[0]))
        assert created
    elif kind == "workspace_insert":
        assert await store.workspaces.insert(WorkspaceRecord.model_validate(args[0]))
    elif kind == "workspace_update":
        await store.workspaces.update(args[0], args[1])
    elif kind == "label_create":
        await store.labels.create(args[0], args[1])
    elif kind == "label_rename":
        await store.labels.edit(args[0], new_name=args[1], now=args[2])
    elif kind == "label_recolour":
        await store.labels.edit(args[0], color=args[1], now=args[2])
    elif kind == "label_delete":
        assert await store.labels.delete(args[0], now=args[1])
    elif kind == "label_assign":
        await store.labels.assign(args[0], args[1], now=args[2])
    elif kind == "label_unassign":
        await store.labels.unassign(args[0], args[1], now=args[2])
    elif kind == "schedule_insert":
        assert await store.schedules.insert(ScheduleRecord.model_validate(args[0]))
    elif kind == "schedule_upsert_run":
        await store.schedules.upsert_run(args[0], args[1], args[2])
    elif kind == "push_token_add":
        await store.push_tokens.add(args[0])
    elif kind == "managed_process_put":
        await store.managed_processes.put(ManagedProcessRecord.model_validate(args[0]))
    elif kind == "plugin_record_put":
        assert store.plugin_records is not None
        await store.plugin_records.collection(args[0], args[1]).put(args[2], args[3])
    elif kind == "plugin_record_delete":
        assert store.plugin_records is not None
        assert await store.plugin_records.collection(args[0], args[1]).delete(args[2])
    elif kind == "plugin_source_put":
        await store.plugin_sources.put(args[0], _PLUGIN_SOURCE.validate_python(args[1]))
    else:
        raise ValueError(f"unknown operation {kind!r}")


UNCACHED_JSON = "json-uncached"
"""The JSON driver keeping no full record in memory: every update reads the record it changes
back from its file, so a kill lands in writes of records that were evicted."""


def open_driver(driver: str, home: Path) -> Store:
    """An unopened instance of the ``paseo.store`` driver named ``driver`` on ``home``
    (or of :data:`UNCACHED_JSON`)."""
    if driver == UNCACHED_JSON:
        from paseo_store_json import JsonStore

        return JsonStore(home, cache_records=0, cache_timeline_bytes=0)
    from paseo.plugins.drivers import load_driver

    store: Store = load_driver("paseo.store", driver)(home, None)
    return store


def _kill_at(store: Store, spec: str) -> None:
    """Make the JSON driver SIGKILL this process at a step of a turn end (see the module
    docstring): the one moment the crash test wants, rather than wherever a timer lands."""
    from paseo_store_json import JsonStore
    from paseo_store_json._usage import JsonUsageRepository

    step, _, nth = spec.partition(":")
    assert isinstance(store, JsonStore), "PASEO_CRASH_KILL_AT is for the json driver"
    usage, timeline = store.usage, store.timeline
    count = [int(nth or "1")]
    armed = [False]
    """An intent was just forced: the next timeline append is a turn end's."""

    def arrived() -> None:
        count[0] -= 1
        if count[0] == 0:
            os.kill(os.getpid(), signal.SIGKILL)

    real_append, real_pending = timeline.append, JsonUsageRepository._write_pending
    real_day = JsonUsageRepository._append

    async def append(entries: Any) -> None:
        if step == "timeline" and armed[0]:
            arrived()
        armed[0] = False
        await real_append(entries)

    def day(self: JsonUsageRepository, *args: Any) -> None:
        if step == "day":
            arrived()
        real_day(self, *args)

    def pending(self: JsonUsageRepository, data: bytes | None) -> None:
        if step == "settle" and data is None:
            arrived()
        armed[0] = data is not None
        real_pending(self, data)

    timeline.append = append  # type: ignore[method-assign]
    usage._append = types.MethodType(day, usage)  # type: ignore[method-assign]
    usage._write_pending = types.MethodType(pending, usage)  # type: ignore[method-assign]


async def _write(driver: str, home: Path, seed: int, mode: str) -> None:
    ops = plan(seed, mode)
    store = open_driver(driver, home)
    await store.open()
    kill_at = os.environ.get("PASEO_CRASH_KILL_AT")
    if kill_at:
        _kill_at(store, kill_at)
    print("ready", flush=True)
    for index, op in enumerate(ops):
        await apply(store, op)
        print(f"ack {index}", flush=True)
    await store.close()
    print("done", flush=True)


def main(argv: list[str]) -> int:
    driver, home, seed, mode = argv
    asyncio.run(_write(driver, Path(home), int(seed), mode))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
