"""No request type of the TypeScript protocol is answered ``unknown_schema``.

``ts_request_types.txt`` lists every inbound session message type of the TypeScript daemon
at f3de5689 (how it was extracted is in its header). Each must have a handler in the
dispatcher's table, except those another branch is building (:data:`PENDING`): the coordinator
empties that set when those branches merge, and from then on a missing handler fails here.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from paseo_tswire import dispatch
from unit.tswire.harness import client_session

LIST = Path(__file__).with_name("ts_request_types.txt")

PENDING: frozenset[str] = frozenset()
"""Types another branch is building, pending its merge (none now: every type is handled)."""


def request_types() -> list[str]:
    lines = (line.strip() for line in LIST.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_the_list_is_the_whole_typescript_union() -> None:
    types = request_types()
    assert len(types) == len(set(types)) == 106
    assert {"fetch_agents_request", "dictation_stream_chunk", "loop/run"} <= set(types)


def test_every_typescript_request_type_has_a_handler() -> None:
    missing = sorted(set(request_types()) - set(dispatch.TABLE) - PENDING)
    assert not missing, "no handler (answered unknown_schema): " + ", ".join(missing)


def test_the_pending_set_names_only_types_still_missing() -> None:
    # Once a branch's handlers are in, its names leave PENDING (or this fails, as a reminder).
    handled = sorted(PENDING & set(dispatch.TABLE))
    assert not handled, "handled now, remove from PENDING: " + ", ".join(handled)
    assert set(request_types()) >= PENDING


def test_only_a_type_outside_the_table_is_answered_unknown_schema() -> None:
    """The table is what the dispatcher answers by: a listed type gets its handler's answer
    (here: invalid_message, the body being empty), an unlisted one unknown_schema."""

    async def answer(type_: str) -> dict[str, Any]:
        session = client_session()
        sent: list[str | bytes] = []

        async def send(frame: str | bytes) -> None:
            sent.append(frame)

        async def close() -> None:
            return None

        session.attach(send, close)
        try:
            await dispatch.handle(session, {"type": type_, "requestId": "r1", "config": 7})
            await session.flush(2.0)
        finally:
            await session.aclose()
        assert len(sent) == 1
        frame = sent[0]
        assert isinstance(frame, str)
        payload: dict[str, Any] = json.loads(frame)["message"]["payload"]
        return payload

    assert asyncio.run(answer("set_daemon_config_request"))["code"] == "invalid_message"
    assert asyncio.run(answer("no_such_request"))["code"] == "unknown_schema"
