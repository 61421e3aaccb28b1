"""The queries that must not grow with the number of agents read an index, not every row.

At a million agents a scan of the ``agents`` table (every record's JSON) takes seconds: the
count behind a listing's total (``paseo ls``'s "N more"), its first page newest first, and the
trash's search for tombstones each ran one until migration ``0005_agent_counts``. The plans
are SQLite's own answer (``EXPLAIN QUERY PLAN``), so these hold whatever the machine's speed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.sqlite_plan import query_plan
from paseo_hookspecs.store import AgentFilter
from paseo_store_sqlite._agents import _index_for, _listing_index, _where


def _plan(home: Path, flt: AgentFilter, *, count: bool) -> str:
    clauses, params = _where(flt)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    if count:
        sql = f"SELECT COUNT(*) FROM agents {_index_for(flt, listing=False)} {where}"
    else:
        # As the driver lists a first page, newest first.
        sql = (
            f"SELECT record FROM agents {_listing_index(flt)} {where} "
            "ORDER BY created_at DESC, id DESC LIMIT 21"
        )
    return query_plan(home, sql, params)


@pytest.mark.parametrize(
    ("flt", "count", "index"),
    [
        (AgentFilter(), True, "INDEX agents_live_count"),  # `paseo ls`'s total
        (AgentFilter(), False, "INDEX agents_live"),  # its page
        (AgentFilter(include_archived=True, trashed=True), True, "INDEX agents_trashed"),
        (AgentFilter(include_archived=True, trashed=True), False, "INDEX agents_trashed"),
        # The narrower lookups keep their own indexes.
        (AgentFilter(workspace_id="w1"), False, "INDEX agents_by_workspace"),
        (
            AgentFilter(include_archived=True, statuses=frozenset({"running", "idle"})),
            False,
            "INDEX agents_by_status",
        ),
        # A label's agents come from the pairs' index, looked up by id.
        (AgentFilter(labels={"paseo.internal": "metadata"}), True, "agent_labels_by_pair"),
        (AgentFilter(labels={"paseo.internal": "metadata"}), False, "agent_labels_by_pair"),
    ],
    ids=[
        "live-count",
        "live-page",
        "tombstone-count",
        "tombstone-page",
        "workspace-page",
        "boot-statuses",
        "label-count",
        "label-page",
    ],
)
def test_listing_and_counting_read_an_index(
    home: Path, with_store: Callable[[Any], Any], flt: AgentFilter, count: bool, index: str
) -> None:
    with_store(lambda store: store.agents.count())  # creates the schema
    plan = _plan(home, flt, count=count)
    assert index in plan, plan
    assert "SCAN agents" not in plan.replace("SCAN agents USING", ""), plan
    if flt.labels:
        assert "INDEX sqlite_autoindex_agents_1 (id=?)" in plan, plan
    elif not count and flt.workspace_id is None and flt.statuses is None:
        assert "TEMP B-TREE" not in plan, plan  # read in order, not sorted
