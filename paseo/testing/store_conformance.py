"""The store conformance suite: one set of pytest tests every ``paseo.store`` driver must pass.

Usage from a third-party store plugin's test suite (a file pytest collects)::

    from paseo.testing.store_conformance import StoreConformance

    class TestMyStore(StoreConformance):
        driver = MyStore            # the Store subclass, or its entry-point name ("json")

Each test builds a fresh driver on an empty home under pytest's ``tmp_path`` with
``driver(home, settings)``, runs ``await store.open()``, exercises the contract of
:mod:`paseo_hookspecs.store` and closes every store it opened. Tests are plain synchronous pytest
functions that drive their own event loop, so no async pytest plugin is needed. Override
:meth:`StoreConformance.make_store` to construct the driver differently (settings, a server); set
the class attributes ``settings``, ``concurrency`` or ``test_timeout`` to tune it.

The suite covers every repository method (reads, inserts, compare-and-set updates with their
``Conflict`` / ``NotFound`` / ``InvalidParams`` outcomes and nothing written on error, deletes),
agent filters, timeline windows, schedule runs, exact-root project idempotence, the label catalog
and its assignment rewrites, and then the properties that only show under load or restart:
concurrent compare-and-set writers lose no update, concurrent exact-root opens create one project,
pages stay stable while rows are inserted and deleted, and a store reopened on the same home holds
exactly what was acknowledged, with every field (including unknown ones) intact.

The record factories (:func:`agent_data` and friends), :func:`snapshot` and
:func:`collect_pages` are public so crash harnesses and benchmarks build the same records.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import pytest
from paseo_hookspecs.errors import Conflict, InvalidParams, NotFound
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import (
    AgentRecord,
    GitPluginSource,
    ManagedProcessRecord,
    NpmPluginSource,
    ProjectRecord,
    ScheduleRecord,
    TimelineEntry,
    WorkspaceRecord,
    dump_record,
    label_identity,
    new_agent_id,
    new_project_id,
    new_schedule_id,
    new_workspace_id,
    normalize_label_name,
)
from paseo_hookspecs.store import MAX_PAGE_SIZE, AgentFilter, Page

__all__ = [
    "StoreConformance",
    "agent_data",
    "collect_pages",
    "iso",
    "managed_process_data",
    "plugin_source_data",
    "project_data",
    "schedule_data",
    "snapshot",
    "store_test",
    "timeline_entry_data",
    "workspace_data",
]

T = TypeVar("T")

# ---------------------------------------------------------------------------------------------
# Record factories: fully populated records, including fields this version does not know.
# ---------------------------------------------------------------------------------------------

_EPOCH = datetime(2025, 3, 1, 9, 0, 0, tzinfo=UTC)


def iso(seconds: float) -> str:
    """A deterministic ISO 8601 UTC timestamp ``seconds`` after a fixed epoch (``...Z``)."""
    moment = _EPOCH + timedelta(seconds=seconds)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _apply(
    data: dict[str, Any], overrides: Mapping[str, Any], without: Iterable[str]
) -> dict[str, Any]:
    data.update(overrides)
    for name in without:
        data.pop(name, None)
    return data


def agent_data(
    agent_id: str | None = None,
    *,
    cwd: str = "/Users/alice/code/acme-api",
    workspace_id: str = "wks_00000000000000a1",
    created_at: str | None = None,
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated agent record as stored (every declared field, nested unknown fields and
    top-level unknown fields a newer writer adds). ``overrides`` replace top-level fields;
    ``without`` drops them."""
    agent_id = agent_id or new_agent_id()
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "id": agent_id,
        "provider": "claude",
        "cwd": cwd,
        "workspaceId": workspace_id,
        "createdAt": created,
        "updatedAt": created,
        "lastActivityAt": created,
        "lastUserMessageAt": created,
        "title": "Fix the login redirect",
        "labels": {"paseo.parent-agent-id": "c91e4a07-5d2b-4f3a-8e16-7b9d0c4f2a85", "team": "core"},
        "lastStatus": "idle",
        "lastModeId": "acceptEdits",
        "config": {
            "title": "Fix the login redirect",
            "modeId": "acceptEdits",
            "model": "claude-sonnet-4",
            "thinkingOptionId": "high",
            "featureValues": {"fast": True},
            "providerOptions": {"maxTurns": 40},
            "extra": {"claude": {"permissionPromptTool": "mcp__paseo__permission"}},
            "systemPrompt": "Be terse. Prefer small diffs.",
            "mcpServers": {"paseo": {"type": "http", "url": "http://127.0.0.1:6767/mcp"}},
            "futureConfigField": ["kept", 1, 2.5, None],
        },
        "runtimeInfo": {
            "provider": "claude",
            "sessionId": "sess-7f3a",
            "model": "claude-sonnet-4",
            "thinkingOptionId": "high",
            "modeId": "acceptEdits",
            "extra": {"pid": 4242, "version": "1.0.71"},
        },
        "features": [
            {
                "type": "toggle",
                "id": "fast",
                "label": "Fast mode",
                "description": "Fewer reasoning tokens",
                "tooltip": "Trades depth for speed",
                "icon": "zap",
                "value": True,
            },
            {
                "type": "select",
                "id": "effort",
                "label": "Effort",
                "description": "Reasoning effort",
                "tooltip": "How hard to think",
                "icon": "brain",
                "value": "high",
                "options": [
                    {
                        "id": "low",
                        "label": "Low",
                        "description": "Quick",
                        "family": "effort",
                        "isDefault": False,
                        "metadata": {"tokens": 1024},
                    },
                    {"id": "high", "label": "High", "isDefault": True, "badge": "new"},
                ],
            },
        ],
        "persistence": {
            "provider": "claude",
            "sessionId": "sess-7f3a",
            "nativeHandle": {"resume": "tok_9c2e", "turns": [1, 2, 3]},
            "metadata": {"cwd": cwd},
        },
        "lastError": None,
        "requiresAttention": True,
        "attentionReason": "permission",
        "attentionTimestamp": created,
        "internal": False,
        "archivedAt": None,
        # Fields newer TypeScript writers add: kept verbatim and written back.
        "owner": {"kind": "hub", "relationshipId": "rel_01", "principal": "héllo ✓"},
        "titleManuallySet": True,
        "queuedPrompts": [{"id": "q1", "text": "then run the tests", "at": created}],
    }
    return _apply(data, overrides, without)


def timeline_entry_data(
    agent_id: str, seq: int, *, epoch: str = "ep-1", **overrides: Any
) -> dict[str, Any]:
    """A timeline entry with a realistic event payload and an unknown top-level field."""
    data: dict[str, Any] = {
        "agentId": agent_id,
        "seq": seq,
        "epoch": epoch,
        "timestamp": iso(seq),
        "event": {
            "type": "timeline_item",
            "item": {
                "type": "assistant_message",
                "id": f"msg-{seq}",
                "text": f"step {seq}: ✓ done",
                "usage": {"inputTokens": 10 * seq, "cached": None},
            },
        },
        "source": "provider",
    }
    data.update(overrides)
    return data


def schedule_data(
    schedule_id: str | None = None,
    *,
    created_at: str | None = None,
    status: str = "active",
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated schedule (cron cadence, new-agent target, two runs, unknown fields)."""
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "id": schedule_id or new_schedule_id(),
        "name": "Nightly dependency audit",
        "prompt": "Audit dependencies and open a PR for safe upgrades.",
        "cadence": {"type": "cron", "expression": "0 3 * * *", "timezone": "Europe/Paris"},
        "target": {
            "type": "new-agent",
            "config": {
                "provider": "codex",
                "cwd": "/Users/alice/code/acme-api",
                "modeId": "auto",
                "model": "gpt-5",
                "thinkingOptionId": "medium",
                "archiveOnFinish": True,
                "isolation": "worktree",
                "title": "Dependency audit",
                "providerOptions": {"sandbox": "workspace-write"},
                "featureValues": {"web": False},
                "systemPrompt": "Only touch lockfiles.",
                "mcpServers": {},
                "futureTargetField": 7,
            },
        },
        "status": status,
        "createdAt": created,
        "updatedAt": created,
        "nextRunAt": iso(86_400),
        "lastRunAt": iso(3_600),
        "pausedAt": None,
        "expiresAt": iso(86_400 * 30),
        "maxRuns": 30,
        "runs": [
            {
                "id": "run-1",
                "scheduledFor": iso(3_600),
                "startedAt": iso(3_601),
                "endedAt": iso(3_900),
                "status": "succeeded",
                "agentId": "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14",
                "workspaceId": "wks_00000000000000a1",
                "output": "Opened PR #42",
                "error": None,
                "durationMs": 299_000,
            },
            {
                "id": "run-2",
                "scheduledFor": iso(7_200),
                "startedAt": iso(7_201),
                "endedAt": None,
                "status": "running",
                "agentId": None,
                "output": None,
                "error": None,
            },
        ],
        "createdBy": {"kind": "cli"},
    }
    return _apply(data, overrides, without)


def project_data(
    project_id: str | None = None,
    *,
    root: str = "/Users/alice/code/acme-api",
    created_at: str | None = None,
    archived_at: str | None = None,
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated project record (with an unknown field)."""
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "projectId": project_id or new_project_id(),
        "rootPath": root,
        "kind": "git",
        "displayName": root.rstrip("/").rsplit("/", 1)[-1] or root,
        "projectKey": "remote:github.com/acme/api",
        "customName": "Acme API",
        "customIconRevision": "rev-3",
        "createdAt": created,
        "updatedAt": created,
        "archivedAt": archived_at,
        "sortHint": 3,
    }
    return _apply(data, overrides, without)


def workspace_data(
    workspace_id: str | None = None,
    *,
    project_id: str = "prj_00000000000000a1",
    cwd: str = "/Users/alice/code/acme-api",
    created_at: str | None = None,
    archived_at: str | None = None,
    labels: list[str] | None = None,
    without: Iterable[str] = (),
    **overrides: Any,
) -> dict[str, Any]:
    """A fully populated workspace record. ``labels`` is omitted unless given (assigned labels
    must exist in the catalog)."""
    created = created_at or iso(0)
    data: dict[str, Any] = {
        "workspaceId": workspace_id or new_workspace_id(),
        "projectId": project_id,
        "cwd": cwd,
        "kind": "worktree",
        "displayName": "fix-login",
        "title": "Login redirect fix",
        "branch": "fix/login",
        "worktreeRoot": cwd,
        "baseBranch": "origin/main",
        "isPaseoOwnedWorktree": True,
        "mainRepoRoot": "/Users/alice/code/acme-api",
        "createdAt": created,
        "updatedAt": created,
        "archivedAt": archived_at,
        "autoArchivedChangeRequestUrl": None,
        "pinnedAt": created,
        "untrustedSource": {
            "kind": "change_request",
            "forge": "github",
            "number": 42,
            "headRepository": "mallory/acme-api",
            "headSha": "0badc0de",
        },
        "setupState": {"ran": True},
    }
    if labels is not None:
        data["labels"] = labels
    return _apply(data, overrides, without)


def managed_process_data(record_id: str | None = None, **overrides: Any) -> dict[str, Any]:
    """A fully populated managed-process record (daemon block, identities, unknown fields)."""
    data: dict[str, Any] = {
        "id": record_id or str(uuid.uuid4()),
        "owner": {"provider": "opencode", "kind": "server", "note": "sidecar"},
        "pid": 31337,
        "command": "/usr/local/bin/opencode",
        "args": ["serve", "--port", "0"],
        "metadata": {"port": 41234, "nested": {"a": [1, 2]}},
        "identity": {
            "commandLine": "/usr/local/bin/opencode serve --port 0",
            "startedAt": iso(10),
            "startTimeTicks": "123456",
            "bootId": "b0a7-1d",
        },
        "daemon": {
            "instanceId": "inst-1",
            "pid": 4000,
            "identity": {
                "commandLine": "paseo daemon start",
                "startedAt": iso(1),
                "startTimeTicks": None,
                "bootId": None,
            },
            "bootId": "b0a7-1d",
            "recordedAt": iso(11),
        },
        "createdAt": iso(10),
        "restartCount": 0,
    }
    data.update(overrides)
    return data


def plugin_source_data(kind: str = "git", **overrides: Any) -> dict[str, Any]:
    """A plugin source record (``git`` with a remote, or ``npm``) with legacy unknown fields."""
    if kind == "git":
        data: dict[str, Any] = {
            "kind": "git",
            "remote": "https://github.com/acme/paseo-plugin-lint.git",
            "selector": "v1.2.0",
        }
    else:
        data = {"kind": "npm", "packageName": "@acme/paseo-plugin-lint"}
    data.update(overrides)
    return data


def _plugin_source(data: Mapping[str, Any]) -> Any:
    if data.get("kind", "git") == "git":
        return GitPluginSource.model_validate(data)
    return NpmPluginSource.model_validate(data)


def _schedules_page(
    store: Store, status: str, cursor: str | None, *, limit: int
) -> Awaitable[Page[ScheduleRecord]]:
    return store.schedules.list(status=status, cursor=cursor, limit=limit)


def _rng(seed: int) -> random.Random:
    """A seeded generator: test data must be reproducible, not unpredictable."""
    return random.Random(seed)  # noqa: S311


def _agent(data: Mapping[str, Any]) -> AgentRecord:
    return AgentRecord.model_validate(data)


def _entries(agent_id: str, seqs: Iterable[int], **overrides: Any) -> list[TimelineEntry]:
    return [
        TimelineEntry.model_validate(timeline_entry_data(agent_id, seq, **overrides))
        for seq in seqs
    ]


# ---------------------------------------------------------------------------------------------
# Reading a whole store.
# ---------------------------------------------------------------------------------------------


async def collect_pages(
    fetch: Callable[[str | None], Awaitable[Page[T]]], *, max_pages: int = 100_000
) -> list[T]:
    """Every item of a cursor listing, following ``next_cursor`` until it is ``None``."""
    items: list[T] = []
    cursor: str | None = None
    for _ in range(max_pages):
        page = await fetch(cursor)
        items.extend(page.items)
        if page.next_cursor is None:
            return items
        cursor = page.next_cursor
    raise AssertionError(f"listing did not end within {max_pages} pages")


async def snapshot(store: Store) -> dict[str, Any]:
    """Everything ``store`` holds, as JSON-ready data (records via ``dump_record``).

    Ordered listings (agents, schedules, projects, workspaces, labels) keep their order; sets and
    maps without a defined order (push tokens, managed processes, plugin sources) are sorted.
    """
    agents = await collect_pages(
        lambda c: store.agents.list(
            AgentFilter(include_archived=True), cursor=c, limit=MAX_PAGE_SIZE
        )
    )
    timelines: dict[str, Any] = {}
    for agent in agents:
        entries = await store.timeline.read(agent.id)
        if entries:
            timelines[agent.id] = [dump_record(e) for e in entries]
    schedules = await collect_pages(lambda c: store.schedules.list(cursor=c, limit=MAX_PAGE_SIZE))
    projects = await collect_pages(
        lambda c: store.projects.list(include_archived=True, cursor=c, limit=MAX_PAGE_SIZE)
    )
    workspaces = await collect_pages(
        lambda c: store.workspaces.list(include_archived=True, cursor=c, limit=MAX_PAGE_SIZE)
    )
    processes = await store.managed_processes.list()
    sources = await store.plugin_sources.list()
    return {
        "agents": [dump_record(a) for a in agents],
        "timelines": timelines,
        "schedules": [dump_record(s) for s in schedules],
        "projects": [dump_record(p) for p in projects],
        "workspaces": [dump_record(w) for w in workspaces],
        "labels": [dump_record(label) for label in await store.labels.list()],
        "push_tokens": sorted(await store.push_tokens.list()),
        "managed_processes": sorted(
            (dump_record(p) for p in processes), key=lambda p: str(p["id"])
        ),
        "plugin_sources": {k: dump_record(v) for k, v in sorted(sources.items())},
    }


# ---------------------------------------------------------------------------------------------
# The suite.
# ---------------------------------------------------------------------------------------------

_StoreTestBody = Callable[[Any, Store], Coroutine[Any, Any, None]]


def store_test(body: _StoreTestBody) -> Callable[[Any, Path], None]:
    """Turn ``async def test_x(self, store)`` into a synchronous pytest test.

    The wrapper runs the body in a fresh event loop with a freshly opened store on an empty home
    under ``tmp_path``, bounded by the class's ``test_timeout``, and closes every store the test
    opened. Its signature is deliberately ``(self, tmp_path)`` so pytest injects only that.
    """

    def test(self: StoreConformance, tmp_path: Path) -> None:
        self.run_store_test(body, tmp_path)

    test.__name__ = body.__name__
    test.__qualname__ = body.__qualname__
    test.__doc__ = body.__doc__
    return test


async def _raises(
    error: type[BaseException] | tuple[type[BaseException], ...], awaitable: Awaitable[Any]
) -> BaseException:
    with pytest.raises(error) as caught:
        await awaitable
    return caught.value


class StoreConformance:
    """Subclass in a ``Test*`` class and set :attr:`driver` to run the suite on a driver."""

    driver: ClassVar[type[Store] | str]
    """The driver class, or its name in the ``paseo.store`` entry-point group."""

    settings: ClassVar[Any] = None
    """Passed as ``settings`` to the driver's constructor."""

    concurrency: ClassVar[int] = 100
    """How many concurrent writers the concurrency tests start."""

    test_timeout: ClassVar[float] = 120.0
    """Upper bound, in seconds, on one test's body."""

    _opened: list[Store]

    # -- hooks -------------------------------------------------------------------------------

    def make_store(self, home: Path) -> Store:
        """A new, unopened driver instance on ``home`` (override for custom construction)."""
        driver = self.driver
        if isinstance(driver, str):
            from paseo.plugins.drivers import load_driver

            driver = load_driver("paseo.store", driver)
        instance: Store = driver(home, self.settings)
        return instance

    async def open_store(self, home: Path) -> Store:
        """Construct and open a store on ``home``; it is closed when the test ends."""
        await asyncio.to_thread(home.mkdir, parents=True, exist_ok=True)
        store = self.make_store(home)
        self._opened.append(store)
        await store.open()
        return store

    async def reopen(self, store: Store) -> Store:
        """Close ``store`` and open a new instance on the same home (a daemon restart)."""
        await store.close()
        return await self.open_store(store.home)

    def run_store_test(self, body: _StoreTestBody, tmp_path: Path) -> None:
        """Run one ``async`` test body against a fresh store (see :func:`store_test`)."""
        self._opened = []

        async def main() -> None:
            try:
                store = await self.open_store(tmp_path / "paseo-home")
                await asyncio.wait_for(body(self, store), self.test_timeout)
            finally:
                for opened in reversed(self._opened):
                    await opened.close()

        asyncio.run(main())

    # -- fresh store, lifecycle ------------------------------------------------------------------

    @store_test
    async def test_fresh_home_is_empty(self, store: Store) -> None:
        """A store opened on an empty home holds nothing and quarantined nothing."""
        assert store.quarantined == []
        assert await snapshot(store) == {
            "agents": [],
            "timelines": {},
            "schedules": [],
            "projects": [],
            "workspaces": [],
            "labels": [],
            "push_tokens": [],
            "managed_processes": [],
            "plugin_sources": {},
        }
        assert await store.agents.count() == 0

    @store_test
    async def test_close_is_idempotent(self, store: Store) -> None:
        await store.agents.insert(_agent(agent_data()))
        await store.close()
        await store.close()
        reopened = await self.open_store(store.home)
        assert await reopened.agents.count() == 1

    # -- agents ------------------------------------------------------------------------------------

    @store_test
    async def test_agent_round_trips_every_field(self, store: Store) -> None:
        """Every declared and unknown field survives insert, get, list and a restart."""
        full = agent_data()
        minimal = agent_data(
            without=[
                "workspaceId",
                "lastActivityAt",
                "lastUserMessageAt",
                "title",
                "lastModeId",
                "config",
                "runtimeInfo",
                "features",
                "persistence",
                "lastError",
                "requiresAttention",
                "attentionReason",
                "attentionTimestamp",
                "internal",
                "archivedAt",
                "owner",
                "titleManuallySet",
                "queuedPrompts",
            ],
            created_at=iso(1),
        )
        assert await store.agents.insert(_agent(full))
        assert await store.agents.insert(_agent(minimal))
        for _ in range(2):
            got = await store.agents.get(full["id"])
            assert got is not None
            assert dump_record(got) == full
            got_min = await store.agents.get(minimal["id"])
            assert got_min is not None
            assert dump_record(got_min) == minimal
            listed = (await store.agents.list()).items
            assert [dump_record(a) for a in listed] == [full, minimal]
            store = await self.reopen(store)

    @store_test
    async def test_agent_get_unknown_is_none(self, store: Store) -> None:
        assert await store.agents.get(new_agent_id()) is None
        assert await store.agents.delete(new_agent_id()) is False

    @store_test
    async def test_agent_insert_only_if_absent(self, store: Store) -> None:
        original = agent_data(title="first")
        assert await store.agents.insert(_agent(original)) is True
        duplicate = agent_data(original["id"], title="second", cwd="/elsewhere")
        assert await store.agents.insert(_agent(duplicate)) is False
        got = await store.agents.get(original["id"])
        assert got is not None
        assert dump_record(got) == original
        assert await store.agents.count() == 1
        store = await self.reopen(store)
        assert await store.agents.count() == 1
        got = await store.agents.get(original["id"])
        assert got is not None
        assert got.title == "first"

    @store_test
    async def test_agent_list_order_and_pagination(self, store: Store) -> None:
        """Listing is ordered by ``(createdAt, id)`` whatever the insertion order; pages chain."""
        rng = _rng(7)
        records = [agent_data(created_at=iso(i // 3), cwd=f"/work/dir-{i % 4}") for i in range(40)]
        for record in rng.sample(records, len(records)):
            assert await store.agents.insert(_agent(record))
        expected = [r["id"] for r in sorted(records, key=lambda r: (r["createdAt"], r["id"]))]
        assert [a.id for a in (await store.agents.list()).items] == expected
        for limit in (1, 6, 39, 40, 41):
            pages: list[Page[AgentRecord]] = []
            cursor: str | None = None
            for _ in range(100):
                page = await store.agents.list(cursor=cursor, limit=limit)
                assert len(page.items) <= limit
                pages.append(page)
                if page.next_cursor is None:
                    break
                assert page.items, "a page with a next cursor must not be empty"
                cursor = page.next_cursor
            assert [a.id for p in pages for a in p.items] == expected
            assert all(len(p.items) == limit for p in pages[:-1])

    @store_test
    async def test_agent_list_rejects_malformed_cursor(self, store: Store) -> None:
        await store.agents.insert(_agent(agent_data()))
        await _raises(InvalidParams, store.agents.list(cursor="not a cursor \u2603"))

    @store_test
    async def test_agent_filters_and_count(self, store: Store) -> None:
        """Every filter criterion alone and combined; ``count`` agrees with ``list``."""
        specs = [
            # (workspace, provider, status, labels, requiresAttention, archived)
            ("w1", "claude", "idle", {"team": "core"}, True, False),
            ("w1", "claude", "running", {"team": "core", "tier": "1"}, None, False),
            ("w1", "codex", "error", {}, False, False),
            ("w2", "claude", "idle", {"team": "web"}, True, True),
            ("w2", "codex", "closed", {"team": "core", "tier": "1"}, None, False),
            ("w3", "opencode", "initializing", {"tier": "1"}, True, False),
            ("w3", "claude", "idle", {"team": "core"}, None, True),
        ]
        ids: list[str] = []
        for i, (ws, provider, status, labels, attention, archived) in enumerate(specs):
            data = agent_data(
                workspace_id=ws,
                provider=provider,
                lastStatus=status,
                labels=labels,
                created_at=iso(i),
                archivedAt=iso(100) if archived else None,
                requiresAttention=attention,
                without=["requiresAttention"] if attention is None else [],
            )
            ids.append(data["id"])
            await store.agents.insert(_agent(data))

        async def matches(flt: AgentFilter) -> list[int]:
            listed = (await store.agents.list(flt)).items
            assert await store.agents.count(flt) == len(listed)
            return [ids.index(a.id) for a in listed]

        assert await matches(AgentFilter()) == [0, 1, 2, 4, 5]
        assert await matches(AgentFilter(include_archived=True)) == [0, 1, 2, 3, 4, 5, 6]
        assert await matches(AgentFilter(workspace_id="w1")) == [0, 1, 2]
        assert await matches(AgentFilter(workspace_id="w2", include_archived=True)) == [3, 4]
        assert await matches(AgentFilter(workspace_id="nope")) == []
        assert await matches(AgentFilter(provider="claude")) == [0, 1]
        assert await matches(AgentFilter(provider="claude", include_archived=True)) == [
            0,
            1,
            3,
            6,
        ]
        assert await matches(AgentFilter(statuses=frozenset({"idle"}))) == [0]
        assert await matches(AgentFilter(statuses=frozenset({"idle", "closed", "error"}))) == [
            0,
            2,
            4,
        ]
        assert await matches(AgentFilter(labels={"team": "core"})) == [0, 1, 4]
        assert await matches(AgentFilter(labels={"team": "core", "tier": "1"})) == [1, 4]
        assert await matches(AgentFilter(labels={"tier": "2"})) == []
        assert await matches(AgentFilter(requires_attention=True)) == [0, 5]
        # Absent ``requiresAttention`` means the agent does not need attention.
        assert await matches(AgentFilter(requires_attention=False)) == [1, 2, 4]
        assert await matches(
            AgentFilter(
                include_archived=True,
                workspace_id="w3",
                provider="claude",
                statuses=frozenset({"idle"}),
                labels={"team": "core"},
            )
        ) == [6]
        # Pages of a filtered listing chain over the filtered rows only.
        flt = AgentFilter(include_archived=True, provider="claude")
        walked = await collect_pages(lambda c: store.agents.list(flt, cursor=c, limit=1))
        assert [ids.index(a.id) for a in walked] == [0, 1, 3, 6]

    @store_test
    async def test_agent_update_applies_changes(self, store: Store) -> None:
        data = agent_data(without=["lastError"])
        agent_id = data["id"]
        await store.agents.insert(_agent(data))
        new_config = {"model": "claude-opus-4", "futureConfigField": {"x": [1]}}
        stored = await store.agents.update(
            agent_id,
            {
                "title": "Renamed",
                "lastStatus": "running",
                "updatedAt": iso(50),
                "config": new_config,
                "labels": {"team": "web"},
                "queuedPrompts": [],
                "brandNewField": {"nested": True},
                # Optional, never-null field: ``None`` removes it.
                "requiresAttention": None,
                "lastError": "boom",
            },
        )
        expected = dict(data)
        expected.update(
            title="Renamed",
            lastStatus="running",
            updatedAt=iso(50),
            config=new_config,
            labels={"team": "web"},
            queuedPrompts=[],
            brandNewField={"nested": True},
            lastError="boom",
        )
        del expected["requiresAttention"]
        assert dump_record(stored) == expected
        got = await store.agents.get(agent_id)
        assert got is not None
        assert dump_record(got) == expected
        # A nullable field set to None holds no value afterwards.
        cleared = await store.agents.update(agent_id, {"lastError": None, "title": None})
        assert cleared.lastError is None
        assert cleared.title is None
        store = await self.reopen(store)
        got = await store.agents.get(agent_id)
        assert got is not None
        assert dump_record(got) == dump_record(cleared)

    @store_test
    async def test_agent_update_compare_and_set(self, store: Store) -> None:
        data = agent_data(title="v1", without=["lastError", "archivedAt"])
        agent_id = data["id"]
        await store.agents.insert(_agent(data))
        # Success: every expected field holds (None matches absent).
        stored = await store.agents.update(
            agent_id,
            {"title": "v2"},
            expect={"title": "v1", "lastError": None, "archivedAt": None, "labels": data["labels"]},
        )
        assert stored.title == "v2"
        # Failure: one mismatching field is enough, and nothing is written.
        before = await store.agents.get(agent_id)
        assert before is not None
        mismatches: list[dict[str, Any]] = [
            {"title": "v1"},
            {"title": "v2", "lastStatus": "running"},
            {"lastError": "something"},
            {"title": None},
            {"labels": {}},
        ]
        for expect in mismatches:
            await _raises(
                Conflict,
                store.agents.update(
                    agent_id, {"title": "v3", "lastStatus": "error"}, expect=expect
                ),
            )
        after = await store.agents.get(agent_id)
        assert after is not None
        assert dump_record(after) == dump_record(before)
        store = await self.reopen(store)
        after = await store.agents.get(agent_id)
        assert after is not None
        assert dump_record(after) == dump_record(before)

    @store_test
    async def test_agent_update_unknown_is_not_found(self, store: Store) -> None:
        await _raises(NotFound, store.agents.update(new_agent_id(), {"title": "x"}))
        await _raises(
            NotFound, store.agents.update(new_agent_id(), {"title": "x"}, expect={"title": None})
        )
        assert await store.agents.count(AgentFilter(include_archived=True)) == 0

    @store_test
    async def test_agent_update_invalid_writes_nothing(self, store: Store) -> None:
        data = agent_data()
        await store.agents.insert(_agent(data))
        for changes in (
            {"title": "ok", "lastStatus": "exploded"},
            {"title": "ok", "createdAt": 12},
            {"title": "ok", "provider": None},
            {"title": "ok", "runtimeInfo": {"sessionId": "no provider"}},
            {"title": "ok", "features": [{"type": "slider"}]},
        ):
            await _raises(InvalidParams, store.agents.update(data["id"], changes))
        got = await store.agents.get(data["id"])
        assert got is not None
        assert dump_record(got) == data
        store = await self.reopen(store)
        got = await store.agents.get(data["id"])
        assert got is not None
        assert dump_record(got) == data

    @store_test
    async def test_agent_update_of_cwd_persists_once(self, store: Store) -> None:
        """Changing the field a driver may place the record by leaves exactly one record."""
        data = agent_data(cwd="/Users/alice/code/old")
        await store.agents.insert(_agent(data))
        await store.agents.update(data["id"], {"cwd": "/Users/alice/code/new"})
        store = await self.reopen(store)
        assert await store.agents.count(AgentFilter(include_archived=True)) == 1
        got = await store.agents.get(data["id"])
        assert got is not None
        assert got.cwd == "/Users/alice/code/new"

    @store_test
    async def test_agent_delete_removes_agent_and_timeline(self, store: Store) -> None:
        keep = agent_data(created_at=iso(0))
        gone = agent_data(created_at=iso(1))
        for data in (keep, gone):
            await store.agents.insert(_agent(data))
            await store.timeline.append(_entries(data["id"], range(3)))
        assert await store.agents.delete(gone["id"]) is True
        assert await store.agents.delete(gone["id"]) is False
        assert await store.agents.get(gone["id"]) is None
        assert await store.timeline.read(gone["id"]) == []
        assert await store.timeline.last(gone["id"]) is None
        store = await self.reopen(store)
        assert await store.agents.get(gone["id"]) is None
        assert await store.timeline.read(gone["id"]) == []
        assert [a.id for a in (await store.agents.list()).items] == [keep["id"]]
        assert len(await store.timeline.read(keep["id"])) == 3

    # -- timeline ------------------------------------------------------------------------------

    async def _agent_with_timeline(self, store: Store, seqs: Iterable[int]) -> str:
        data = agent_data()
        await store.agents.insert(_agent(data))
        await store.timeline.append(_entries(data["id"], seqs))
        return str(data["id"])

    @store_test
    async def test_timeline_round_trips_every_field(self, store: Store) -> None:
        agent_id = await self._agent_with_timeline(store, [])
        entries = [timeline_entry_data(agent_id, s) for s in (0, 1, 2)]
        await store.timeline.append([TimelineEntry.model_validate(e) for e in entries])
        assert [dump_record(e) for e in await store.timeline.read(agent_id)] == entries
        store = await self.reopen(store)
        assert [dump_record(e) for e in await store.timeline.read(agent_id)] == entries
        last = await store.timeline.last(agent_id)
        assert last is not None
        assert dump_record(last) == entries[-1]

    @store_test
    async def test_timeline_read_windows(self, store: Store) -> None:
        seqs = [1, 2, 3, 5, 8, 13, 21]
        agent_id = await self._agent_with_timeline(store, seqs[:3])
        # Appends in several batches, with gaps: seq is strictly increasing, not contiguous.
        await store.timeline.append(_entries(agent_id, seqs[3:5]))
        await store.timeline.append(_entries(agent_id, seqs[5:]))

        async def read(**kwargs: Any) -> list[int]:
            return [e.seq for e in await store.timeline.read(agent_id, **kwargs)]

        assert await read() == seqs
        assert await read(after_seq=3) == [5, 8, 13, 21]
        assert await read(after_seq=4) == [5, 8, 13, 21]
        assert await read(before_seq=13) == [1, 2, 3, 5, 8]
        assert await read(after_seq=2, before_seq=13) == [3, 5, 8]
        assert await read(after_seq=3, before_seq=5) == []
        assert await read(after_seq=21) == []
        assert await read(before_seq=1) == []
        assert await read(limit=2) == [1, 2]
        assert await read(limit=2, tail=True) == [13, 21]
        assert await read(limit=100, tail=True) == seqs
        assert await read(tail=True) == seqs
        assert await read(after_seq=1, limit=3) == [2, 3, 5]
        assert await read(after_seq=2, before_seq=13, limit=2) == [3, 5]
        assert await read(after_seq=2, before_seq=13, limit=2, tail=True) == [5, 8]
        assert await store.timeline.read(new_agent_id()) == []

    @store_test
    async def test_timeline_last(self, store: Store) -> None:
        agent_id = await self._agent_with_timeline(store, [])
        assert await store.timeline.last(agent_id) is None
        await store.timeline.append(_entries(agent_id, [4, 9]))
        last = await store.timeline.last(agent_id)
        assert last is not None
        assert last.seq == 9
        await store.timeline.append(_entries(agent_id, [10]))
        last = await store.timeline.last(agent_id)
        assert last is not None
        assert last.seq == 10

    @store_test
    async def test_timeline_rejects_non_increasing_seq(self, store: Store) -> None:
        """A batch with a seq not above every stored one, or not increasing, changes nothing."""
        agent_id = await self._agent_with_timeline(store, [0, 1, 2])
        for seqs in ([2], [1], [0, 3], [3, 3], [3, 5, 4], [4, 5, 6, 2], [5, 6, 7, 7]):
            await _raises(Conflict, store.timeline.append(_entries(agent_id, seqs)))
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0, 1, 2]
        store = await self.reopen(store)
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0, 1, 2]
        await store.timeline.append(_entries(agent_id, [3]))
        assert [e.seq for e in await store.timeline.read(agent_id)] == [0, 1, 2, 3]

    @store_test
    async def test_timeline_rejects_mixed_agents(self, store: Store) -> None:
        first = await self._agent_with_timeline(store, [])
        second = await self._agent_with_timeline(store, [])
        mixed = _entries(first, [0, 1]) + _entries(second, [2])
        await _raises((InvalidParams, Conflict), store.timeline.append(mixed))
        assert await store.timeline.read(first) == []
        assert await store.timeline.read(second) == []

    @store_test
    async def test_timeline_is_per_agent(self, store: Store) -> None:
        first = await self._agent_with_timeline(store, [0, 1, 2])
        second = await self._agent_with_timeline(store, [0, 1])
        # The same seq on another agent is no conflict.
        await store.timeline.append(_entries(second, [2, 3]))
        assert [e.seq for e in await store.timeline.read(first)] == [0, 1, 2]
        assert [e.seq for e in await store.timeline.read(second)] == [0, 1, 2, 3]
        assert {e.agentId for e in await store.timeline.read(second)} == {second}

    @store_test
    async def test_timeline_delete(self, store: Store) -> None:
        first = await self._agent_with_timeline(store, [0, 1, 2])
        second = await self._agent_with_timeline(store, [0])
        await store.timeline.delete(first)
        assert await store.timeline.read(first) == []
        assert await store.timeline.last(first) is None
        await store.timeline.delete(new_agent_id())
        # A deleted timeline starts over: every stored seq is gone.
        await store.timeline.append(_entries(first, [0], epoch="ep-2"))
        store = await self.reopen(store)
        entries = await store.timeline.read(first)
        assert [(e.seq, e.epoch) for e in entries] == [(0, "ep-2")]
        assert len(await store.timeline.read(second)) == 1
        assert await store.agents.get(first) is not None

    # -- schedules ------------------------------------------------------------------------------

    @store_test
    async def test_schedule_round_trips_every_field(self, store: Store) -> None:
        full = schedule_data()
        minimal = schedule_data(
            cadence={"type": "every", "everyMs": 60_000},
            target={"type": "agent", "agentId": "3b8f1c2e-7a4d-4e9b-9c61-2f0d5a8e7b14"},
            name=None,
            nextRunAt=None,
            lastRunAt=None,
            expiresAt=None,
            maxRuns=None,
            runs=[],
            created_at=iso(5),
            without=["createdBy"],
        )
        for data in (full, minimal):
            assert await store.schedules.insert(ScheduleRecord.model_validate(data))
        for _ in range(2):
            for data in (full, minimal):
                got = await store.schedules.get(data["id"])
                assert got is not None
                assert dump_record(got) == data
            listed = (await store.schedules.list()).items
            assert [dump_record(s) for s in listed] == [full, minimal]
            store = await self.reopen(store)

    @store_test
    async def test_schedule_insert_get_delete(self, store: Store) -> None:
        data = schedule_data(name="first")
        assert await store.schedules.get(data["id"]) is None
        assert await store.schedules.insert(ScheduleRecord.model_validate(data)) is True
        other = schedule_data(data["id"], name="second")
        assert await store.schedules.insert(ScheduleRecord.model_validate(other)) is False
        got = await store.schedules.get(data["id"])
        assert got is not None
        assert got.name == "first"
        assert await store.schedules.delete(data["id"]) is True
        assert await store.schedules.delete(data["id"]) is False
        assert await store.schedules.get(data["id"]) is None
        store = await self.reopen(store)
        assert await store.schedules.get(data["id"]) is None

    @store_test
    async def test_schedule_list_filter_order_and_pagination(self, store: Store) -> None:
        statuses = ["active", "paused", "completed"]
        records = [schedule_data(created_at=iso(i // 2), status=statuses[i % 3]) for i in range(15)]
        for record in _rng(3).sample(records, len(records)):
            await store.schedules.insert(ScheduleRecord.model_validate(record))
        ordered = sorted(records, key=lambda r: (r["createdAt"], r["id"]))
        listed = await collect_pages(lambda c: store.schedules.list(cursor=c, limit=4))
        assert [s.id for s in listed] == [r["id"] for r in ordered]
        for status in statuses:
            listed = await collect_pages(functools.partial(_schedules_page, store, status, limit=2))
            assert [s.id for s in listed] == [r["id"] for r in ordered if r["status"] == status]
        await _raises(InvalidParams, store.schedules.list(cursor="\u2603 garbage"))

    @store_test
    async def test_schedule_update_compare_and_set(self, store: Store) -> None:
        data = schedule_data()
        await store.schedules.insert(ScheduleRecord.model_validate(data))
        stored = await store.schedules.update(
            data["id"],
            {"status": "paused", "pausedAt": iso(99), "updatedAt": iso(99)},
            expect={"status": "active", "pausedAt": None},
        )
        assert (stored.status, stored.pausedAt) == ("paused", iso(99))
        before = dump_record(stored)
        await _raises(
            Conflict,
            store.schedules.update(data["id"], {"status": "active"}, expect={"status": "active"}),
        )
        await _raises(
            InvalidParams, store.schedules.update(data["id"], {"name": "x", "status": "bogus"})
        )
        await _raises(
            InvalidParams, store.schedules.update(data["id"], {"name": "x", "maxRuns": 0})
        )
        await _raises(NotFound, store.schedules.update(new_schedule_id(), {"name": "x"}))
        store = await self.reopen(store)
        got = await store.schedules.get(data["id"])
        assert got is not None
        assert dump_record(got) == before

    @store_test
    async def test_schedule_upsert_run(self, store: Store) -> None:
        data = schedule_data(runs=[])
        schedule_id = data["id"]
        await store.schedules.insert(ScheduleRecord.model_validate(data))
        run = {
            "id": "run-a",
            "scheduledFor": iso(10),
            "startedAt": iso(11),
            "endedAt": None,
            "status": "running",
            "agentId": None,
            "output": None,
            "error": None,
            "attempt": 1,
        }
        stored = await store.schedules.upsert_run(
            schedule_id, run, {"lastRunAt": iso(11), "nextRunAt": iso(70)}
        )
        assert [dump_record(r) for r in stored.runs] == [run]
        assert (stored.lastRunAt, stored.nextRunAt) == (iso(11), iso(70))
        second = dict(run, id="run-b", scheduledFor=iso(70), startedAt=iso(71))
        await store.schedules.upsert_run(schedule_id, second)
        # Same id: the run is replaced in place, and the changes land with it.
        finished = dict(run, endedAt=iso(40), status="succeeded", output="done")
        stored = await store.schedules.upsert_run(
            schedule_id, finished, {"status": "completed", "nextRunAt": None}
        )
        assert [dump_record(r) for r in stored.runs] == [finished, second]
        assert stored.status == "completed"
        assert stored.nextRunAt is None
        before = dump_record(stored)
        await _raises(NotFound, store.schedules.upsert_run(new_schedule_id(), run))
        await _raises(
            InvalidParams, store.schedules.upsert_run(schedule_id, dict(run, status="weird"))
        )
        await _raises(
            InvalidParams,
            store.schedules.upsert_run(
                schedule_id, dict(run, id="run-c"), {"status": "not-a-status"}
            ),
        )
        store = await self.reopen(store)
        got = await store.schedules.get(schedule_id)
        assert got is not None
        assert dump_record(got) == before

    # -- projects ------------------------------------------------------------------------------

    @store_test
    async def test_project_round_trips_every_field(self, store: Store) -> None:
        full = project_data(root="/Users/alice/code/one")
        legacy = project_data(
            "remote:github.com/acme/two",
            root="/Users/alice/code/two",
            created_at=iso(1),
            projectKey=None,
            customName=None,
            customIconRevision=None,
            without=["sortHint"],
        )
        for data in (full, legacy):
            stored, created = await store.projects.insert_if_root_free(
                ProjectRecord.model_validate(data)
            )
            assert created
            assert dump_record(stored) == data
        for _ in range(2):
            for data in (full, legacy):
                got = await store.projects.get(data["projectId"])
                assert got is not None
                assert dump_record(got) == data
            listed = (await store.projects.list()).items
            assert [dump_record(p) for p in listed] == [full, legacy]
            store = await self.reopen(store)

    @store_test
    async def test_project_insert_if_root_free_is_idempotent(self, store: Store) -> None:
        first = project_data(root="/Users/alice/code/api")
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(first)
        )
        assert created
        again = project_data(root="/Users/alice/code/api", customName="Other")
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(again)
        )
        assert not created
        assert dump_record(stored) == first
        assert await store.projects.get(again["projectId"]) is None
        other_root = project_data(root="/Users/alice/code/api/sub")
        _, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(other_root)
        )
        assert created
        store = await self.reopen(store)
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(project_data(root="/Users/alice/code/api"))
        )
        assert not created
        assert stored.projectId == first["projectId"]
        assert len((await store.projects.list()).items) == 2

    @store_test
    async def test_project_archived_root_does_not_block_a_fresh_project(self, store: Store) -> None:
        old = project_data(root="/Users/alice/code/api")
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(old))
        await store.projects.update(old["projectId"], {"archivedAt": iso(10)})
        fresh = project_data(root="/Users/alice/code/api", created_at=iso(20))
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(fresh)
        )
        assert created
        assert stored.projectId == fresh["projectId"]
        # The archived project is untouched (not resurrected) and the fresh one is now active.
        archived = await store.projects.get(old["projectId"])
        assert archived is not None
        assert archived.archivedAt == iso(10)
        stored, created = await store.projects.insert_if_root_free(
            ProjectRecord.model_validate(project_data(root="/Users/alice/code/api"))
        )
        assert not created
        assert stored.projectId == fresh["projectId"]
        assert [p.projectId for p in (await store.projects.list()).items] == [fresh["projectId"]]
        listed = (await store.projects.list(include_archived=True)).items
        assert [p.projectId for p in listed] == [old["projectId"], fresh["projectId"]]

    @store_test
    async def test_project_list_order_filter_and_pagination(self, store: Store) -> None:
        # Insertion order, not creation time, orders the registry.
        records = [
            project_data(
                root=f"/src/p{i}",
                created_at=iso(100 - i),
                archived_at=iso(200) if i % 4 == 1 else None,
            )
            for i in range(13)
        ]
        for record in records:
            await store.projects.insert_if_root_free(ProjectRecord.model_validate(record))
        await store.projects.update(records[0]["projectId"], {"customName": "Renamed"})
        all_ids = [r["projectId"] for r in records]
        active_ids = [r["projectId"] for r in records if r["archivedAt"] is None]
        walked = await collect_pages(
            lambda c: store.projects.list(include_archived=True, cursor=c, limit=3)
        )
        assert [p.projectId for p in walked] == all_ids
        walked = await collect_pages(lambda c: store.projects.list(cursor=c, limit=2))
        assert [p.projectId for p in walked] == active_ids
        assert await store.projects.delete(records[2]["projectId"]) is True
        late = project_data(root="/src/late", created_at=iso(0))
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(late))
        store = await self.reopen(store)
        walked = await collect_pages(
            lambda c: store.projects.list(include_archived=True, cursor=c, limit=5)
        )
        expected = [i for i in all_ids if i != records[2]["projectId"]] + [late["projectId"]]
        assert [p.projectId for p in walked] == expected
        await _raises(InvalidParams, store.projects.list(cursor="\u2603 garbage"))

    @store_test
    async def test_project_update_and_delete(self, store: Store) -> None:
        data = project_data()
        project_id = data["projectId"]
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(data))
        stored = await store.projects.update(
            project_id,
            {"kind": "non_git", "projectKey": None, "updatedAt": iso(5)},
            expect={"kind": "git", "archivedAt": None},
        )
        assert (stored.kind, stored.projectKey) == ("non_git", None)
        assert "projectKey" in dump_record(stored)
        before = dump_record(stored)
        await _raises(
            Conflict, store.projects.update(project_id, {"kind": "git"}, expect={"kind": "git"})
        )
        await _raises(InvalidParams, store.projects.update(project_id, {"kind": "svn"}))
        await _raises(
            InvalidParams, store.projects.update(project_id, {"customName": "x", "rootPath": 3})
        )
        await _raises(NotFound, store.projects.update(new_project_id(), {"customName": "x"}))
        got = await store.projects.get(project_id)
        assert got is not None
        assert dump_record(got) == before
        assert await store.projects.delete(project_id) is True
        assert await store.projects.delete(project_id) is False
        assert await store.projects.get(project_id) is None
        store = await self.reopen(store)
        assert await store.projects.get(project_id) is None

    # -- workspaces ---------------------------------------------------------------------------

    @store_test
    async def test_workspace_round_trips_every_field(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Needs review", "red")
        full = workspace_data(labels=["Backend", "Needs review"])
        minimal = workspace_data(
            "/Users/alice/code/legacy-path-id",
            cwd="/Users/alice/code/legacy",
            created_at=iso(1),
            kind="directory",
            title=None,
            branch=None,
            worktreeRoot=None,
            baseBranch=None,
            isPaseoOwnedWorktree=False,
            mainRepoRoot=None,
            pinnedAt=None,
            without=["untrustedSource", "setupState"],
        )
        for data in (full, minimal):
            assert await store.workspaces.insert(WorkspaceRecord.model_validate(data))
        for _ in range(2):
            for data in (full, minimal):
                got = await store.workspaces.get(data["workspaceId"])
                assert got is not None
                assert dump_record(got) == data
            listed = (await store.workspaces.list()).items
            assert [dump_record(w) for w in listed] == [full, minimal]
            store = await self.reopen(store)

    @store_test
    async def test_workspace_insert_get_delete(self, store: Store) -> None:
        data = workspace_data(title="first")
        assert await store.workspaces.get(data["workspaceId"]) is None
        assert await store.workspaces.insert(WorkspaceRecord.model_validate(data)) is True
        clash = workspace_data(data["workspaceId"], title="second")
        assert await store.workspaces.insert(WorkspaceRecord.model_validate(clash)) is False
        got = await store.workspaces.get(data["workspaceId"])
        assert got is not None
        assert got.title == "first"
        assert await store.workspaces.delete(data["workspaceId"]) is True
        assert await store.workspaces.delete(data["workspaceId"]) is False
        store = await self.reopen(store)
        assert await store.workspaces.get(data["workspaceId"]) is None

    @store_test
    async def test_workspace_list_filters_and_pagination(self, store: Store) -> None:
        records = []
        for i in range(14):
            records.append(
                workspace_data(
                    project_id=f"prj_{i % 3:016x}",
                    cwd=f"/src/dir-{i % 4}",
                    created_at=iso(50 - i),
                    archived_at=iso(99) if i % 5 == 0 else None,
                )
            )
        for record in records:
            await store.workspaces.insert(WorkspaceRecord.model_validate(record))

        async def ids(**kwargs: Any) -> list[str]:
            walked = await collect_pages(
                lambda c: store.workspaces.list(cursor=c, limit=3, **kwargs)
            )
            return [w.workspaceId for w in walked]

        def expected(pred: Callable[[dict[str, Any]], bool]) -> list[str]:
            return [r["workspaceId"] for r in records if pred(r)]

        assert await ids(include_archived=True) == expected(lambda r: True)
        assert await ids() == expected(lambda r: r["archivedAt"] is None)
        prj = f"prj_{1:016x}"
        assert await ids(project_id=prj) == expected(
            lambda r: r["projectId"] == prj and r["archivedAt"] is None
        )
        assert await ids(project_id=prj, include_archived=True) == expected(
            lambda r: r["projectId"] == prj
        )
        assert await ids(cwd="/src/dir-2") == expected(
            lambda r: r["cwd"] == "/src/dir-2" and r["archivedAt"] is None
        )
        assert await ids(cwd="/src/dir-0", project_id=f"prj_{0:016x}", include_archived=True) == (
            expected(lambda r: r["cwd"] == "/src/dir-0" and r["projectId"] == f"prj_{0:016x}")
        )
        assert await ids(cwd="/src/dir") == []
        await _raises(InvalidParams, store.workspaces.list(cursor="\u2603 garbage"))

    @store_test
    async def test_workspace_update_compare_and_set(self, store: Store) -> None:
        data = workspace_data()
        workspace_id = data["workspaceId"]
        await store.workspaces.insert(WorkspaceRecord.model_validate(data))
        stored = await store.workspaces.update(
            workspace_id,
            {"branch": "main", "title": None, "untrustedSource": None, "updatedAt": iso(9)},
            expect={"branch": "fix/login", "archivedAt": None},
        )
        dumped = dump_record(stored)
        # ``title`` is nullable and always written; ``untrustedSource`` is omitted when unset.
        assert dumped["title"] is None
        assert "untrustedSource" not in dumped
        assert dumped["branch"] == "main"
        await _raises(
            Conflict,
            store.workspaces.update(workspace_id, {"branch": "x"}, expect={"branch": "fix/login"}),
        )
        await _raises(
            InvalidParams, store.workspaces.update(workspace_id, {"branch": "x", "kind": "vm"})
        )
        await _raises(NotFound, store.workspaces.update(new_workspace_id(), {"branch": "x"}))
        store = await self.reopen(store)
        got = await store.workspaces.get(workspace_id)
        assert got is not None
        assert dump_record(got) == dumped

    # -- labels -------------------------------------------------------------------------------

    async def _labelled_workspaces(self, store: Store, assignments: list[list[str]]) -> list[str]:
        ids = []
        for i, names in enumerate(assignments):
            data = workspace_data(cwd=f"/src/w{i}", created_at=iso(i))
            await store.workspaces.insert(WorkspaceRecord.model_validate(data))
            if names:
                await store.labels.assign(data["workspaceId"], names, now=iso(i))
            ids.append(str(data["workspaceId"]))
        return ids

    async def _labels_of(self, store: Store, workspace_id: str) -> list[str]:
        ws = await store.workspaces.get(workspace_id)
        assert ws is not None
        return list(ws.labels or [])

    async def _updated_at(self, store: Store, workspace_id: str) -> str:
        ws = await store.workspaces.get(workspace_id)
        assert ws is not None
        return ws.updatedAt

    @store_test
    async def test_label_create_normalizes_and_keeps_order(self, store: Store) -> None:
        created = await store.labels.create("  Needs \t  review ", "red")
        assert (created.name, created.color) == ("Needs review", "red")
        assert created.name == normalize_label_name("  Needs \t  review ")
        await store.labels.create("backend", "sky")
        await store.labels.create("Alpha", "amber")
        expected = [("Needs review", "red"), ("backend", "sky"), ("Alpha", "amber")]
        assert [(d.name, d.color) for d in await store.labels.list()] == expected
        store = await self.reopen(store)
        assert [(d.name, d.color) for d in await store.labels.list()] == expected

    @store_test
    async def test_label_create_rejects_duplicate_identity(self, store: Store) -> None:
        await store.labels.create("Needs review", "red")
        for name in ("Needs review", "needs REVIEW", "  needs   review  ", "NEEDS\u00a0REVIEW"):
            await _raises(Conflict, store.labels.create(name, "sky"))
        assert [d.name for d in await store.labels.list()] == ["Needs review"]

    @store_test
    async def test_label_create_rejects_invalid(self, store: Store) -> None:
        await _raises(InvalidParams, store.labels.create("   ", "red"))
        await _raises(InvalidParams, store.labels.create("", "red"))
        await _raises(InvalidParams, store.labels.create("ok", "magenta"))
        assert await store.labels.list() == []

    @store_test
    async def test_label_recolour_is_catalog_only(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Web", "pink")
        (ws,) = await self._labelled_workspaces(store, [["Backend"]])
        stamp = await self._updated_at(store, ws)
        edited = await store.labels.edit("backend", color="teal", now=iso(500))
        assert (edited.name, edited.color) == ("Backend", "teal")
        assert [(d.name, d.color) for d in await store.labels.list()] == [
            ("Backend", "teal"),
            ("Web", "pink"),
        ]
        assert await self._labels_of(store, ws) == ["Backend"]
        assert await self._updated_at(store, ws) == stamp
        await _raises(InvalidParams, store.labels.edit("Backend", color="magenta", now=iso(501)))
        assert [d.color for d in await store.labels.list()] == ["teal", "pink"]

    @store_test
    async def test_label_rename_rewrites_assignments(self, store: Store) -> None:
        for name, color in (("Backend", "sky"), ("Web", "pink"), ("Ops", "amber")):
            await store.labels.create(name, color)
        ws = await self._labelled_workspaces(
            store, [["Backend", "Web"], ["Web"], ["Ops", "Backend"], []]
        )
        untouched = {w: await self._updated_at(store, w) for w in (ws[1], ws[3])}
        edited = await store.labels.edit("BACKEND", new_name="  Server   side ", now=iso(900))
        assert (edited.name, edited.color) == ("Server side", "sky")
        assert [d.name for d in await store.labels.list()] == ["Server side", "Web", "Ops"]
        for _ in range(2):
            assert await self._labels_of(store, ws[0]) == ["Server side", "Web"]
            assert await self._labels_of(store, ws[1]) == ["Web"]
            assert await self._labels_of(store, ws[2]) == ["Ops", "Server side"]
            assert await self._labels_of(store, ws[3]) == []
            assert await self._updated_at(store, ws[0]) == iso(900)
            assert await self._updated_at(store, ws[2]) == iso(900)
            for w, stamp in untouched.items():
                assert await self._updated_at(store, w) == stamp
            store = await self.reopen(store)

    @store_test
    async def test_label_rename_and_recolour_in_one_edit(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        (ws,) = await self._labelled_workspaces(store, [["Backend"]])
        edited = await store.labels.edit("Backend", new_name="API", color="indigo", now=iso(7))
        assert (edited.name, edited.color) == ("API", "indigo")
        store = await self.reopen(store)
        assert [(d.name, d.color) for d in await store.labels.list()] == [("API", "indigo")]
        assert await self._labels_of(store, ws) == ["API"]

    @store_test
    async def test_label_rename_case_only_is_allowed(self, store: Store) -> None:
        await store.labels.create("backend", "sky")
        (ws,) = await self._labelled_workspaces(store, [["backend"]])
        edited = await store.labels.edit("backend", new_name="Backend", now=iso(3))
        assert edited.name == "Backend"
        assert [d.name for d in await store.labels.list()] == ["Backend"]
        assert await self._labels_of(store, ws) == ["Backend"]

    @store_test
    async def test_label_rename_onto_existing_conflicts(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Web", "pink")
        ws = await self._labelled_workspaces(store, [["Backend"], ["Web", "Backend"]])
        before_catalog = await store.labels.list()
        before = [dump_record(w) for w in (await store.workspaces.list()).items]
        for target in ("Web", "web", " WEB "):
            await _raises(
                Conflict, store.labels.edit("Backend", new_name=target, color="red", now=iso(9))
            )
        assert await store.labels.list() == before_catalog
        assert [dump_record(w) for w in (await store.workspaces.list()).items] == before
        store = await self.reopen(store)
        assert await store.labels.list() == before_catalog
        assert await self._labels_of(store, ws[1]) == ["Web", "Backend"]

    @store_test
    async def test_label_edit_unknown_is_not_found(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await _raises(NotFound, store.labels.edit("Frontend", new_name="UI", now=iso(1)))
        await _raises(NotFound, store.labels.edit("Frontend", color="red", now=iso(1)))
        assert [(d.name, d.color) for d in await store.labels.list()] == [("Backend", "sky")]

    @store_test
    async def test_label_delete_rewrites_assignments(self, store: Store) -> None:
        for name, color in (("Backend", "sky"), ("Web", "pink")):
            await store.labels.create(name, color)
        ws = await self._labelled_workspaces(store, [["Backend", "Web"], ["Web"], ["Backend"]])
        stamp = await self._updated_at(store, ws[1])
        assert await store.labels.delete(" backend ", now=iso(700)) is True
        assert await store.labels.delete("Backend", now=iso(701)) is False
        for _ in range(2):
            assert [d.name for d in await store.labels.list()] == ["Web"]
            assert await self._labels_of(store, ws[0]) == ["Web"]
            assert await self._labels_of(store, ws[1]) == ["Web"]
            assert await self._labels_of(store, ws[2]) == []
            assert await self._updated_at(store, ws[0]) == iso(700)
            assert await self._updated_at(store, ws[2]) == iso(700)
            assert await self._updated_at(store, ws[1]) == stamp
            store = await self.reopen(store)
        # The name is free again.
        await store.labels.create("BACKEND", "red")

    @store_test
    async def test_label_assign_and_unassign_are_idempotent(self, store: Store) -> None:
        for name, color in (("Backend", "sky"), ("Web", "pink"), ("Ops", "amber")):
            await store.labels.create(name, color)
        (ws,) = await self._labelled_workspaces(store, [[]])
        stored = await store.labels.assign(ws, ["backend", "Web"], now=iso(10))
        # Assignments hold the catalog's display names, whatever spelling the caller used.
        assert stored.labels == ["Backend", "Web"]
        assert stored.updatedAt == iso(10)
        stored = await store.labels.assign(ws, ["BACKEND", "Ops"], now=iso(11))
        assert stored.labels == ["Backend", "Web", "Ops"]
        stored = await store.labels.assign(ws, ["Web"], now=iso(12))
        assert stored.labels == ["Backend", "Web", "Ops"]
        stored = await store.labels.unassign(ws, ["web"], now=iso(13))
        assert stored.labels == ["Backend", "Ops"]
        assert stored.updatedAt == iso(13)
        stored = await store.labels.unassign(ws, ["Web"], now=iso(14))
        assert list(stored.labels or []) == ["Backend", "Ops"]
        store = await self.reopen(store)
        assert await self._labels_of(store, ws) == ["Backend", "Ops"]
        stored = await store.labels.unassign(ws, ["Backend", "Ops"], now=iso(15))
        assert list(stored.labels or []) == []

    @store_test
    async def test_label_assign_unknown_is_not_found(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        (ws,) = await self._labelled_workspaces(store, [[]])
        before = await store.workspaces.get(ws)
        await _raises(NotFound, store.labels.assign(new_workspace_id(), ["Backend"], now=iso(1)))
        await _raises(NotFound, store.labels.unassign(new_workspace_id(), ["Backend"], now=iso(1)))
        # One unknown name refuses the whole assignment.
        await _raises(NotFound, store.labels.assign(ws, ["Backend", "Nope"], now=iso(1)))
        assert await store.workspaces.get(ws) == before
        store = await self.reopen(store)
        got = await store.workspaces.get(ws)
        assert got is not None
        assert before is not None
        assert dump_record(got) == dump_record(before)

    # -- push tokens, managed processes, plugin sources ----------------------------------------

    @store_test
    async def test_push_tokens(self, store: Store) -> None:
        tokens = ["ExponentPushToken[aaa]", "ExponentPushToken[bbb]", "ExponentPushToken[ccc]"]
        for token in tokens:
            assert await store.push_tokens.add(token) is True
        assert await store.push_tokens.add(tokens[0]) is False
        assert sorted(await store.push_tokens.list()) == tokens
        assert await store.push_tokens.remove(tokens[1]) is True
        assert await store.push_tokens.remove(tokens[1]) is False
        store = await self.reopen(store)
        assert sorted(await store.push_tokens.list()) == [tokens[0], tokens[2]]

    @store_test
    async def test_managed_processes(self, store: Store) -> None:
        first = managed_process_data()
        second = managed_process_data(pid=777, args=[], metadata={})
        for data in (first, second):
            await store.managed_processes.put(ManagedProcessRecord.model_validate(data))
        replaced = dict(first, pid=999, args=["serve"])
        await store.managed_processes.put(ManagedProcessRecord.model_validate(replaced))
        for _ in range(2):
            got = await store.managed_processes.get(first["id"])
            assert got is not None
            assert dump_record(got) == replaced
            listed = {p.id: dump_record(p) for p in await store.managed_processes.list()}
            assert listed == {first["id"]: replaced, second["id"]: second}
            store = await self.reopen(store)
        assert await store.managed_processes.delete(first["id"]) is True
        assert await store.managed_processes.delete(first["id"]) is False
        assert await store.managed_processes.get(first["id"]) is None
        store = await self.reopen(store)
        assert [p.id for p in await store.managed_processes.list()] == [second["id"]]

    @store_test
    async def test_plugin_sources(self, store: Store) -> None:
        git = plugin_source_data("git")
        npm = plugin_source_data("npm")
        await store.plugin_sources.put("lint", _plugin_source(git))
        await store.plugin_sources.put("fmt", _plugin_source(npm))
        for _ in range(2):
            got = await store.plugin_sources.get("lint")
            assert got is not None
            assert dump_record(got) == git
            listed = {k: dump_record(v) for k, v in (await store.plugin_sources.list()).items()}
            assert listed == {"lint": git, "fmt": npm}
            store = await self.reopen(store)
        await store.plugin_sources.put("lint", _plugin_source(npm))
        assert await store.plugin_sources.delete("fmt") is True
        assert await store.plugin_sources.delete("fmt") is False
        assert await store.plugin_sources.get("fmt") is None
        store = await self.reopen(store)
        listed = {k: dump_record(v) for k, v in (await store.plugin_sources.list()).items()}
        assert listed == {"lint": npm}

    # -- concurrency ----------------------------------------------------------------------------

    async def _cas_increment(
        self,
        read: Callable[[], Awaitable[str | None]],
        write: Callable[[str, str | None], Awaitable[Any]],
    ) -> int:
        """Increment a counter held as a string field with a compare-and-set retry loop;
        returns the number of conflicts met."""
        conflicts = 0
        for _ in range(self.concurrency * 20):
            current = await read()
            try:
                await write(str(int(current or "0") + 1), current)
            except Conflict:
                conflicts += 1
                await asyncio.sleep(0)
                continue
            return conflicts
        raise AssertionError("a compare-and-set writer never succeeded")

    @store_test
    async def test_concurrent_compare_and_set_loses_no_update(self, store: Store) -> None:
        """Many writers incrementing one field of each repository with CAS retry loops."""
        agent = agent_data(title="0")
        await store.agents.insert(_agent(agent))
        schedule = schedule_data(name="0")
        await store.schedules.insert(ScheduleRecord.model_validate(schedule))
        project = project_data(customName="0")
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(project))
        workspace = workspace_data(title="0")
        await store.workspaces.insert(WorkspaceRecord.model_validate(workspace))

        async def agent_title() -> str | None:
            got = await store.agents.get(agent["id"])
            assert got is not None
            return got.title

        async def schedule_name() -> str | None:
            got = await store.schedules.get(schedule["id"])
            assert got is not None
            return got.name

        async def project_name() -> str | None:
            got = await store.projects.get(project["projectId"])
            assert got is not None
            return got.customName

        async def workspace_title() -> str | None:
            got = await store.workspaces.get(workspace["workspaceId"])
            assert got is not None
            return got.title

        writers = [
            self._cas_increment(
                agent_title,
                lambda new, old: store.agents.update(
                    agent["id"], {"title": new}, expect={"title": old}
                ),
            )
            for _ in range(self.concurrency)
        ]
        small = max(self.concurrency // 4, 2)
        for _ in range(small):
            writers.append(
                self._cas_increment(
                    schedule_name,
                    lambda new, old: store.schedules.update(
                        schedule["id"], {"name": new}, expect={"name": old}
                    ),
                )
            )
            writers.append(
                self._cas_increment(
                    project_name,
                    lambda new, old: store.projects.update(
                        project["projectId"], {"customName": new}, expect={"customName": old}
                    ),
                )
            )
            writers.append(
                self._cas_increment(
                    workspace_title,
                    lambda new, old: store.workspaces.update(
                        workspace["workspaceId"], {"title": new}, expect={"title": old}
                    ),
                )
            )
        await asyncio.gather(*writers)
        for _ in range(2):
            assert await agent_title() == str(self.concurrency)
            assert await schedule_name() == str(small)
            assert await project_name() == str(small)
            assert await workspace_title() == str(small)
            store = await self.reopen(store)

    @store_test
    async def test_concurrent_updates_of_distinct_fields_are_all_kept(self, store: Store) -> None:
        """Unconditional updates of different fields must not overwrite each other."""
        agents = [agent_data(created_at=iso(i)) for i in range(5)]
        for data in agents:
            await store.agents.insert(_agent(data))
        n = self.concurrency
        await asyncio.gather(
            *(store.agents.update(agents[i % 5]["id"], {f"field{i}": i}) for i in range(n))
        )
        store = await self.reopen(store)
        for k, data in enumerate(agents):
            got = await store.agents.get(data["id"])
            assert got is not None
            dumped = dump_record(got)
            for i in range(k, n, 5):
                assert dumped.get(f"field{i}") == i, f"update of field{i} was lost"

    @store_test
    async def test_concurrent_inserts_of_one_id_insert_once(self, store: Store) -> None:
        agent_id = new_agent_id()
        results = await asyncio.gather(
            *(
                store.agents.insert(_agent(agent_data(agent_id, title=f"writer {i}")))
                for i in range(self.concurrency)
            )
        )
        assert results.count(True) == 1
        winner = results.index(True)
        store = await self.reopen(store)
        got = await store.agents.get(agent_id)
        assert got is not None
        assert got.title == f"writer {winner}"
        assert await store.agents.count() == 1

    @store_test
    async def test_concurrent_opens_of_one_root_create_one_project(self, store: Store) -> None:
        root = "/Users/alice/code/race"
        candidates = [project_data(root=root) for _ in range(self.concurrency)]
        results = await asyncio.gather(
            *(
                store.projects.insert_if_root_free(ProjectRecord.model_validate(c))
                for c in candidates
            )
        )
        assert [created for _, created in results].count(True) == 1
        winner = next(stored.projectId for stored, created in results if created)
        assert {stored.projectId for stored, _ in results} == {winner}
        store = await self.reopen(store)
        listed = (await store.projects.list(include_archived=True)).items
        assert [p.projectId for p in listed] == [winner]

    @store_test
    async def test_concurrent_label_creates_of_one_identity_create_one(self, store: Store) -> None:
        spellings = ["Needs review", "needs review", " NEEDS  REVIEW", "Needs Review "]
        outcomes = await asyncio.gather(
            *(
                store.labels.create(spellings[i % len(spellings)], "red")
                for i in range(self.concurrency)
            ),
            return_exceptions=True,
        )
        successes = [o for o in outcomes if not isinstance(o, BaseException)]
        failures = [o for o in outcomes if isinstance(o, BaseException)]
        assert len(successes) == 1
        assert all(isinstance(f, Conflict) for f in failures), failures
        assert len(await store.labels.list()) == 1

    @store_test
    async def test_concurrent_timeline_appends_with_retry(self, store: Store) -> None:
        agent_id = await self._agent_with_timeline(store, [])

        async def append_next(writer: int) -> None:
            for _ in range(self.concurrency * 20):
                last = await store.timeline.last(agent_id)
                seq = 0 if last is None else last.seq + 1
                try:
                    await store.timeline.append(
                        _entries(agent_id, [seq], source=f"writer-{writer}")
                    )
                except Conflict:
                    await asyncio.sleep(0)
                    continue
                return
            raise AssertionError("a timeline writer never succeeded")

        await asyncio.gather(*(append_next(i) for i in range(self.concurrency)))
        store = await self.reopen(store)
        entries = await store.timeline.read(agent_id)
        assert [e.seq for e in entries] == list(range(self.concurrency))
        writers = [dump_record(e)["source"] for e in entries]
        assert sorted(writers) == sorted(f"writer-{i}" for i in range(self.concurrency))

    @store_test
    async def test_concurrent_label_writes_keep_assignments_consistent(self, store: Store) -> None:
        """Assignments racing renames and deletes never leave a name outside the catalog."""
        names = [f"Label {i}" for i in range(6)]
        for name in names:
            await store.labels.create(name, "sky")
        ws = await self._labelled_workspaces(store, [[] for _ in range(20)])
        rng = _rng(11)

        async def assign(w: str, name: str, t: int) -> None:
            # NotFound: renamed or deleted first, a legitimate outcome of the race.
            with contextlib.suppress(NotFound):
                await store.labels.assign(w, [name], now=iso(t))

        operations: list[Coroutine[Any, Any, Any]] = []
        for t in range(self.concurrency):
            operations.append(assign(rng.choice(ws), rng.choice(names), 1000 + t))
        operations.append(store.labels.edit("Label 0", new_name="Renamed 0", now=iso(2000)))
        operations.append(store.labels.edit("Label 1", new_name="Renamed 1", now=iso(2001)))
        operations.append(store.labels.delete("Label 2", now=iso(2002)))
        rng.shuffle(operations)
        await asyncio.gather(*operations)

        async def check(current: Store) -> None:
            catalog = {d.name for d in await current.labels.list()}
            assert catalog == {"Renamed 0", "Renamed 1", "Label 3", "Label 4", "Label 5"}
            for w in ws:
                labels = await self._labels_of(current, w)
                assert set(labels) <= catalog, (w, labels)
                assert len({label_identity(n) for n in labels}) == len(labels), labels

        await check(store)
        store = await self.reopen(store)
        await check(store)

    # -- pagination stability ---------------------------------------------------------------------

    async def _walk_while_mutating(
        self,
        *,
        list_page: Callable[[str | None], Awaitable[Page[Any]]],
        key: Callable[[Any], str],
        stable: list[str],
        volatile: list[str],
        insert_one: Callable[[int], Awaitable[str]],
        delete_one: Callable[[str], Awaitable[bool]],
        order_key: Callable[[Any], Any] | None,
        seed: int,
    ) -> None:
        """Walk every page; between pages insert rows and delete rows (sometimes the cursor row
        itself). Rows present throughout must each appear exactly once; no row may appear twice;
        when the listing has a sort key it must never go backwards."""
        rng = _rng(seed)
        stable_set = set(stable)
        volatile = list(volatile)
        seen: list[str] = []
        last_order: Any = None
        cursor: str | None = None
        for step in range(10_000):
            page = await list_page(cursor)
            for item in page.items:
                seen.append(key(item))
                if order_key is not None:
                    current = order_key(item)
                    assert last_order is None or current > last_order, (
                        f"listing went backwards at {current!r} after {last_order!r} (seed {seed})"
                    )
                    last_order = current
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
            for _ in range(3):
                volatile.append(await insert_one(step))
            for _ in range(2):
                if volatile:
                    await delete_one(volatile.pop(rng.randrange(len(volatile))))
            if step % 3 == 0 and page.items:
                # Delete the row the cursor names: it was seen, so it leaves the stable set.
                cursor_row = key(page.items[-1])
                stable_set.discard(cursor_row)
                if cursor_row in volatile:
                    volatile.remove(cursor_row)
                await delete_one(cursor_row)
        else:
            raise AssertionError("walk did not end")
        duplicates = {k for k in seen if seen.count(k) > 1}
        assert not duplicates, f"rows repeated across pages: {sorted(duplicates)} (seed {seed})"
        missing = stable_set - set(seen)
        assert not missing, f"rows skipped across pages: {sorted(missing)} (seed {seed})"

    @store_test
    async def test_agent_pagination_is_stable_under_writes(self, store: Store) -> None:
        rng = _rng(21)
        ids = []
        for i in range(90):
            data = agent_data(created_at=iso(i // 2), cwd=f"/src/d{i % 5}")
            await store.agents.insert(_agent(data))
            ids.append(data["id"])

        async def insert_one(_step: int) -> str:
            data = agent_data(created_at=iso(rng.randrange(0, 46)))
            await store.agents.insert(_agent(data))
            return str(data["id"])

        await self._walk_while_mutating(
            list_page=lambda c: store.agents.list(cursor=c, limit=7),
            key=lambda a: a.id,
            stable=ids[::3] + ids[1::3],
            volatile=ids[2::3],
            insert_one=insert_one,
            delete_one=store.agents.delete,
            order_key=lambda a: (a.createdAt, a.id),
            seed=21,
        )

    @store_test
    async def test_schedule_pagination_is_stable_under_writes(self, store: Store) -> None:
        rng = _rng(22)
        ids = []
        for i in range(60):
            data = schedule_data(created_at=iso(i // 2))
            await store.schedules.insert(ScheduleRecord.model_validate(data))
            ids.append(data["id"])

        async def insert_one(_step: int) -> str:
            data = schedule_data(created_at=iso(rng.randrange(0, 31)))
            await store.schedules.insert(ScheduleRecord.model_validate(data))
            return str(data["id"])

        await self._walk_while_mutating(
            list_page=lambda c: store.schedules.list(cursor=c, limit=6),
            key=lambda s: s.id,
            stable=ids[::2],
            volatile=ids[1::2],
            insert_one=insert_one,
            delete_one=store.schedules.delete,
            order_key=lambda s: (s.createdAt, s.id),
            seed=22,
        )

    @store_test
    async def test_project_pagination_is_stable_under_writes(self, store: Store) -> None:
        ids = []
        for i in range(60):
            data = project_data(root=f"/src/p{i}")
            await store.projects.insert_if_root_free(ProjectRecord.model_validate(data))
            ids.append(data["projectId"])
        counter = iter(range(10_000))

        async def insert_one(_step: int) -> str:
            data = project_data(root=f"/src/new{next(counter)}")
            await store.projects.insert_if_root_free(ProjectRecord.model_validate(data))
            return str(data["projectId"])

        await self._walk_while_mutating(
            list_page=lambda c: store.projects.list(cursor=c, limit=6),
            key=lambda p: p.projectId,
            stable=ids[::2],
            volatile=ids[1::2],
            insert_one=insert_one,
            delete_one=store.projects.delete,
            order_key=None,
            seed=23,
        )

    @store_test
    async def test_workspace_pagination_is_stable_under_writes(self, store: Store) -> None:
        ids = []
        for i in range(60):
            data = workspace_data(cwd=f"/src/w{i}")
            await store.workspaces.insert(WorkspaceRecord.model_validate(data))
            ids.append(data["workspaceId"])

        async def insert_one(_step: int) -> str:
            data = workspace_data()
            await store.workspaces.insert(WorkspaceRecord.model_validate(data))
            return str(data["workspaceId"])

        await self._walk_while_mutating(
            list_page=lambda c: store.workspaces.list(cursor=c, limit=6),
            key=lambda w: w.workspaceId,
            stable=ids[::2],
            volatile=ids[1::2],
            insert_one=insert_one,
            delete_one=store.workspaces.delete,
            order_key=None,
            seed=24,
        )

    # -- restart ---------------------------------------------------------------------------------

    @store_test
    async def test_restart_preserves_everything(self, store: Store) -> None:
        """Every kind of record written, then a new instance on the same home sees it all."""
        await self._populate(store)
        before = await snapshot(store)
        store = await self.reopen(store)
        assert store.quarantined == []
        assert await snapshot(store) == before
        # Writes after a restart persist as well, and a second restart changes nothing.
        await store.labels.edit("Backend", new_name="Server", now=iso(5000))
        await store.agents.update(before["agents"][0]["id"], {"lastStatus": "running"})
        after = await snapshot(store)
        store = await self.reopen(store)
        assert await snapshot(store) == after

    async def _populate(self, store: Store) -> None:
        await store.labels.create("Backend", "sky")
        await store.labels.create("Web", "pink")
        project = project_data()
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(project))
        archived = project_data(root="/src/old", archived_at=iso(3))
        await store.projects.insert_if_root_free(ProjectRecord.model_validate(archived))
        for i in range(4):
            ws = workspace_data(
                project_id=project["projectId"],
                cwd=f"/src/w{i}",
                created_at=iso(i),
                labels=[["Backend"], ["Web", "Backend"], [], ["Web"]][i],
                archived_at=iso(9) if i == 3 else None,
            )
            await store.workspaces.insert(WorkspaceRecord.model_validate(ws))
            for j in range(3):
                agent = agent_data(
                    workspace_id=ws["workspaceId"],
                    cwd=ws["cwd"],
                    created_at=iso(10 * i + j),
                    archivedAt=iso(99) if j == 2 else None,
                )
                await store.agents.insert(_agent(agent))
                await store.timeline.append(_entries(agent["id"], range(j + 1)))
        for i in range(3):
            await store.schedules.insert(
                ScheduleRecord.model_validate(schedule_data(created_at=iso(i)))
            )
        await store.push_tokens.add("ExponentPushToken[one]")
        await store.push_tokens.add("ExponentPushToken[two]")
        await store.managed_processes.put(
            ManagedProcessRecord.model_validate(managed_process_data())
        )
        await store.plugin_sources.put("lint", _plugin_source(plugin_source_data("git")))
        await store.plugin_sources.put("fmt", _plugin_source(plugin_source_data("npm")))
