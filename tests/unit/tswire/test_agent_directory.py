"""``fetch_agents_request``'s sort and filters apply to the whole directory before a page is
cut (the TypeScript daemon's order): a page of agents needing attention in one project holds
only those, sorted, and its cursor continues where it stopped."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from paseo_tswire.handlers import agent_directory
from paseo_tswire.models import inbound as req


class Record:
    """A record as the port returns it (``as_json`` dumps it)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def model_dump(self, **_options: Any) -> dict[str, Any]:
        return dict(self.data)


class Agents:
    """The agent port's ``list``, newest first, in pages of 2 (so reading all takes several)."""

    def __init__(self, records: list[dict[str, Any]]) -> None:
        self.records = records

    async def list(self, query: Any, *, cursor: str | None, limit: int | None) -> Any:
        start = int(cursor or 0)
        items = [Record(r) for r in self.records[start : start + 2]]
        more = start + 2 < len(self.records)
        return SimpleNamespace(items=items, next_cursor=str(start + 2) if more else None)


RECORDS = [
    {
        "id": f"a{i}",
        "title": f"T{9 - i}",
        "project": project,
        "requiresAttention": attention,
        "status": status,
        "updatedAt": f"2026-12-01T00:00:0{i}Z",
    }
    for i, (project, attention, status) in enumerate(
        [
            ("p1", True, "idle"),
            ("p2", True, "running"),
            ("p1", False, "idle"),
            ("p1", True, "running"),
            ("p1", True, "error"),
        ]
    )
]


async def _snapshots(session: Any, records: list[dict[str, Any]]) -> list[Any]:
    return [
        SimpleNamespace(
            agent=SimpleNamespace(
                id=r["id"],
                title=r["title"],
                status=r["status"],
                pendingPermissions=[],
                attentionReason=None,
                createdAt=r["updatedAt"],
                updatedAt=r["updatedAt"],
            ),
            project=SimpleNamespace(projectKey=r["project"]),
        )
        for r in records
    ]


def _fetch(**fields: Any) -> tuple[list[str], Any]:
    msg = req.FetchAgents.model_validate({"requestId": "r", **fields})
    session = SimpleNamespace(agents=Agents(RECORDS))
    entries, page = asyncio.run(
        agent_directory.full_directory(session, msg, _snapshots)  # type: ignore[arg-type]
    )
    return [e.agent.id for e in entries], page


def test_filters_and_sort_apply_before_the_page() -> None:
    fields = {
        "filter": {"projectKeys": ["p1"], "requiresAttention": True},
        "sort": [{"key": "status_priority", "direction": "asc"}],
        "page": {"limit": 2},
    }
    first, page = _fetch(**fields)
    # p1 and attention: a0 (idle), a3 (running), a4 (error); error first, then running.
    assert first == ["a4", "a3"]
    assert page.hasMore
    rest, last = _fetch(**{**fields, "page": {"limit": 2, "cursor": page.nextCursor}})
    assert rest == ["a0"]
    assert not last.hasMore


def test_the_default_order_is_updated_at_newest_first() -> None:
    ids, _page = _fetch(filter={"requiresAttention": False})
    assert ids == ["a2"]
    ids, _page = _fetch(sort=[{"key": "title", "direction": "asc"}])
    assert ids == ["a4", "a3", "a2", "a1", "a0"]
    assert agent_directory.needs_full_read(req.FetchAgents(requestId="r")) is False
