"""Store driver cost against the floor of the same work done by hand, measured in the same run.

A home of 10,000 agent records (about 1 KB each, spread over 50 cwd directories) and 1,000
workspaces is built once per driver, then each driver is timed next to its floor:

* cold load: ``Store(home).open()``; floor for json: read and ``json.loads`` every record file;
  for sqlite: connect, apply the PRAGMAs, run one query.
* list (one workspace's active agents; the first page of all active agents):
  ``agents.list(filter)``; floor for json: filter and sort the already parsed dicts; for sqlite:
  the driver's SQL on a raw ``sqlite3`` connection plus ``json.loads`` of each row.
* update one agent: ``agents.update(id, changes)``; floor for json: ``atomic_write_json`` of the
  record file; for sqlite: a raw read-modify-``UPDATE`` transaction (WAL, ``synchronous=FULL``).

Driver and floor samples are interleaved so machine noise hits both alike; medians are printed
with their ratio. Targets: json cold load within 3x of its floor, sqlite filtered list within 3x.
Run: ``.venv/bin/python bench/store.py`` (``--agents``/``--workspaces`` to scale, ``--runs``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    AGENTS_DIR,
    PROJECTS_FILE,
    WORKSPACES_FILE,
    AgentRecord,
    ProjectRecord,
    WorkspaceRecord,
    agent_record_path,
)
from paseo_hookspecs.store import DEFAULT_PAGE_SIZE, AgentFilter

from paseo.fs import atomic_write_json
from paseo.plugins.drivers import load_driver
from paseo.testing.store_conformance import agent_data, iso, project_data, workspace_data

CWD_DIRS = 50
SQLITE_FILE = "paseo.db"
"""Where the sqlite driver keeps its database inside the home (needed only by its floor)."""

TARGETS = {("json", "cold load"): 3.0, ("sqlite", "list: one workspace"): 3.0}


# -- the data set ------------------------------------------------------------------------------


def build_records(
    agents: int, workspaces: int
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """One project, ``workspaces`` workspaces over 50 cwds, ``agents`` agents over those."""
    rng = random.Random(1)
    project = project_data("prj_00000000000000b1", root="/Users/alice/code")
    workspace_records = [
        workspace_data(
            f"wks_{i:016x}",
            project_id=project["projectId"],
            cwd=f"/Users/alice/code/repo-{i % CWD_DIRS}",
            created_at=iso(i),
            archived_at=iso(10**6) if i % 20 == 0 else None,
        )
        for i in range(workspaces)
    ]
    agent_records = []
    for i in range(agents):
        workspace = workspace_records[i % workspaces]
        record = agent_data(
            f"{rng.getrandbits(32):08x}-0000-4000-8000-{i:012x}",
            cwd=workspace["cwd"],
            workspace_id=workspace["workspaceId"],
            created_at=iso(rng.randrange(10**7)),
            lastStatus=rng.choice(["idle", "running", "closed", "error"]),
            archivedAt=iso(2 * 10**7) if i % 10 == 0 else None,
            # Trimmed to about 1 KB, a typical agent record.
            without=["features", "queuedPrompts", "owner", "persistence"],
        )
        del record["config"]["mcpServers"], record["config"]["futureConfigField"]
        agent_records.append(record)
    return project, workspace_records, agent_records


def write_json_home(
    home: Path,
    project: dict[str, Any],
    workspaces: list[dict[str, Any]],
    agents: list[dict[str, Any]],
) -> None:
    """Lay the records out as the JSON driver (and TypeScript Paseo) stores them."""
    for record in agents:
        path = home / agent_record_path(record["id"], record["cwd"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2) + "\n")
    (home / PROJECTS_FILE).parent.mkdir(parents=True, exist_ok=True)
    (home / PROJECTS_FILE).write_text(json.dumps([project], indent=2) + "\n")
    (home / WORKSPACES_FILE).write_text(json.dumps(workspaces, indent=2) + "\n")


async def fill_through_driver(
    store: Store,
    project: dict[str, Any],
    workspaces: list[dict[str, Any]],
    agents: list[dict[str, Any]],
) -> None:
    await store.projects.insert_if_root_free(ProjectRecord.model_validate(project))
    for chunk_start in range(0, len(workspaces), 200):
        await asyncio.gather(
            *(
                store.workspaces.insert(WorkspaceRecord.model_validate(w))
                for w in workspaces[chunk_start : chunk_start + 200]
            )
        )
    for chunk_start in range(0, len(agents), 200):
        await asyncio.gather(
            *(
                store.agents.insert(AgentRecord.model_validate(a))
                for a in agents[chunk_start : chunk_start + 200]
            )
        )


# -- timing helpers ------------------------------------------------------------------------------


async def time_async(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


def time_sync(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Results:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, float]] = []

    def add(self, driver: str, name: str, measured: list[float], floor: list[float]) -> None:
        self.rows.append((driver, name, statistics.median(measured), statistics.median(floor)))

    def print(self) -> None:
        print(
            f"{'driver':<8}{'measurement':<28}{'median ms':>11}{'floor ms':>11}{'ratio':>8}"
            f"{'target':>9}"
        )
        for driver, name, measured, floor in self.rows:
            target = TARGETS.get((driver, name))
            mark = ""
            if target is not None:
                mark = f"<= {target:g}x" + (" ok" if measured / floor <= target else " MISS")
            print(
                f"{driver:<8}{name:<28}{measured * 1000:>11.3f}{floor * 1000:>11.3f}"
                f"{measured / floor:>8.2f}{mark:>12}"
            )


# -- floors ----------------------------------------------------------------------------------


def json_load_floor(home: Path) -> list[Any]:
    """Read and parse every record file of the home, nothing else."""
    return [json.loads(path.read_bytes()) for path in home.rglob("*.json")]


def json_list_floor(agents: list[dict[str, Any]], flt: AgentFilter) -> list[dict[str, Any]]:
    matching = [
        a
        for a in agents
        if (flt.include_archived or a.get("archivedAt") is None)
        and (flt.workspace_id is None or a.get("workspaceId") == flt.workspace_id)
    ]
    matching.sort(key=lambda a: (a["createdAt"], a["id"]))
    return matching[:DEFAULT_PAGE_SIZE]


def sqlite_connect(home: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(home / SQLITE_FILE, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def sqlite_open_floor(home: Path) -> None:
    conn = sqlite_connect(home)
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    conn.close()


def sqlite_list_floor(conn: sqlite3.Connection, flt: AgentFilter) -> list[Any]:
    clauses, params = ["archived_at IS NULL"], []
    if flt.workspace_id is not None:
        clauses.append("workspace_id = ?")
        params.append(flt.workspace_id)
    sql = f"SELECT record FROM agents WHERE {' AND '.join(clauses)} ORDER BY created_at, id LIMIT ?"
    rows = conn.execute(sql, [*params, DEFAULT_PAGE_SIZE + 1]).fetchall()
    return [json.loads(row[0]) for row in rows[:DEFAULT_PAGE_SIZE]]


def sqlite_update_floor(conn: sqlite3.Connection, agent_id: str, changes: dict[str, Any]) -> None:
    conn.execute("BEGIN IMMEDIATE")
    record = json.loads(
        conn.execute("SELECT record FROM agents WHERE id = ?", (agent_id,)).fetchone()[0]
    )
    record.update(changes)
    conn.execute("UPDATE agents SET record = ? WHERE id = ?", (json.dumps(record), agent_id))
    conn.execute("COMMIT")


# -- the benchmark ---------------------------------------------------------------------------


async def bench_driver(
    name: str, home: Path, agents: list[dict[str, Any]], args: argparse.Namespace, results: Results
) -> None:
    driver = load_driver("paseo.store", name)
    by_id = {a["id"]: a for a in agents}
    rng = random.Random(2)

    # Cold load: a new instance opening the home, against the floor, interleaved.
    measured, floor = [], []
    for _ in range(args.runs):
        store: Store = driver(home, None)
        measured.append(await time_async(store.open))
        await store.close()
        if name == "json":
            floor.append(time_sync(lambda: json_load_floor(home)))
        else:
            floor.append(time_sync(lambda: sqlite_open_floor(home)))
    results.add(name, "cold load", measured, floor)

    store = driver(home, None)
    await store.open()
    conn = sqlite_connect(home) if name == "sqlite" else None
    parsed = json_load_floor(home) if name == "json" else []
    parsed_agents = [p for p in parsed if isinstance(p, dict) and "provider" in p]
    try:
        workspace_ids = sorted({a["workspaceId"] for a in agents})
        filters: list[tuple[str, Callable[[], AgentFilter]]] = [
            ("list: one workspace", lambda: AgentFilter(workspace_id=rng.choice(workspace_ids))),
            ("list: all active, page 1", AgentFilter),
        ]
        for label, make_filter in filters:
            measured, floor = [], []
            for _ in range(args.lists):
                flt = make_filter()
                measured.append(await time_async(partial(store.agents.list, flt)))
                if conn is not None:
                    floor.append(time_sync(partial(sqlite_list_floor, conn, flt)))
                else:
                    floor.append(time_sync(partial(json_list_floor, parsed_agents, flt)))
            results.add(name, label, measured, floor)

        measured, floor = [], []
        ids = sorted(by_id)
        for i in range(args.updates):
            agent_id = rng.choice(ids)
            changes = {"lastActivityAt": iso(3 * 10**7 + i), "updatedAt": iso(3 * 10**7 + i)}
            measured.append(await time_async(partial(store.agents.update, agent_id, changes)))
            other = rng.choice(ids)
            if conn is not None:
                floor.append(time_sync(partial(sqlite_update_floor, conn, other, changes)))
            else:
                record = dict(by_id[other], **changes)
                path = home / agent_record_path(other, record["cwd"])
                floor.append(time_sync(partial(atomic_write_json, path, record)))
        results.add(name, "update one agent", measured, floor)
    finally:
        if conn is not None:
            conn.close()
        await store.close()


async def main_async(args: argparse.Namespace) -> int:
    project, workspaces, agents = build_records(args.agents, args.workspaces)
    size = statistics.mean(len(json.dumps(a)) for a in agents[:200])
    print(
        f"store bench: {len(agents)} agents (~{size / 1024:.1f} KB each, {CWD_DIRS} cwd "
        f"directories), {len(workspaces)} workspaces; medians of {args.runs} cold loads, "
        f"{args.lists} lists, {args.updates} updates"
    )
    results = Results()
    with tempfile.TemporaryDirectory(prefix="paseo-store-bench-") as tmp:
        for name in args.drivers:
            home = Path(tmp) / name
            home.mkdir()
            start = time.perf_counter()
            if name == "json":
                write_json_home(home, project, workspaces, agents)
            else:
                store: Store = load_driver("paseo.store", name)(home, None)
                await store.open()
                await fill_through_driver(store, project, workspaces, agents)
                await store.close()
            print(
                f"  {name}: home built in {time.perf_counter() - start:.1f} s"
                f" ({sum(1 for _ in (home / AGENTS_DIR).rglob('*.json'))} agent files)"
                if name == "json"
                else f"  {name}: home built in {time.perf_counter() - start:.1f} s (driver inserts)"
            )
            await bench_driver(name, home, agents, args, results)
    results.print()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--workspaces", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=7, help="cold loads per driver")
    parser.add_argument("--lists", type=int, default=200, help="list calls per filter")
    parser.add_argument("--updates", type=int, default=200, help="single-record updates")
    parser.add_argument("--drivers", nargs="+", default=["json", "sqlite"])
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
