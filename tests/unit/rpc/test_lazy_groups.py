"""A lazily registered method group: entered from its stubs, loaded by its first call, and
refused method by method where the loaded group disagrees with what it declared."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from paseo_hookspecs.registration import (
    LazyRpcMethodGroup,
    RpcMethod,
    RpcMethodGroup,
    RpcMethodStub,
)
from pydantic import BaseModel

from paseo.rpc.dispatch import Call, MethodTable, invoke

OWNER = frozenset({"local", "remote"})
LOCAL = frozenset({"local"})


class EchoParams(BaseModel):
    text: str


async def _echo(ctx: Any, params: EchoParams) -> dict[str, str]:
    return {"echo": params.text}


async def _nothing(ctx: Any, params: None) -> dict[str, bool]:
    return {"ok": True}


class _Group:
    """A lazy ``demo`` group whose loader counts its calls and builds ``methods``."""

    def __init__(self, methods: list[RpcMethod], stubs: list[RpcMethodStub]) -> None:
        self.loads = 0
        self.methods = methods
        self.lazy = LazyRpcMethodGroup("demo", stubs, self.load)

    def load(self) -> RpcMethodGroup:
        self.loads += 1
        return RpcMethodGroup("demo", self.methods)


def _demo() -> _Group:
    return _Group(
        [
            RpcMethod("demo.echo", _echo, EchoParams, access=OWNER),
            RpcMethod("demo.local", _nothing, access=LOCAL),
        ],
        [RpcMethodStub("demo.echo", OWNER), RpcMethodStub("demo.local", LOCAL)],
    )


def _call(table: MethodTable, kind: str, method: str, params: dict[str, Any]) -> Any:
    call = Call(1, method, params, False)
    frame = asyncio.run(invoke(table, table.allowed_for(kind), call, None))  # type: ignore[arg-type]
    assert isinstance(frame, str)
    return json.loads(frame)


def test_a_lazy_group_is_listed_and_allowed_without_being_loaded() -> None:
    group = _demo()
    table = MethodTable()
    assert table.add_group(group.lazy, "kernel") == []
    assert sorted(entry.name for entry in table) == ["demo.echo", "demo.local"]
    assert table.allowed_for("local") == {"demo.echo", "demo.local"}
    assert table.allowed_for("remote") == {"demo.echo"}
    # Refusals that need no handler: an unknown method, one the session may not call.
    assert _call(table, "local", "demo.missing", {})["error"]["data"]["code"] == "method_not_found"
    assert _call(table, "remote", "demo.local", {})["error"]["data"]["code"] == "access_denied"
    assert group.loads == 0


def test_the_first_call_loads_the_group_once_for_all_its_methods() -> None:
    group = _demo()
    table = MethodTable()
    table.add_group(group.lazy, "kernel")
    assert _call(table, "local", "demo.echo", {"text": "hi"})["result"] == {"echo": "hi"}
    assert _call(table, "local", "demo.local", {})["result"] == {"ok": True}
    assert (
        _call(table, "local", "demo.echo", {"text": 3})["error"]["data"]["code"] == "invalid_params"
    )
    assert group.loads == 1


def test_a_loaded_method_that_differs_from_its_stub_is_refused(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The stub says local only; the loaded method would also let remote sessions in: refused
    # (the allowlists were made from the stub). The one that agrees is served.
    group = _Group(
        [
            RpcMethod("demo.echo", _echo, EchoParams, access=OWNER),
            RpcMethod("demo.local", _nothing, access=OWNER),
        ],
        [RpcMethodStub("demo.echo", OWNER), RpcMethodStub("demo.local", LOCAL)],
    )
    table = MethodTable()
    table.add_group(group.lazy, "kernel")
    with caplog.at_level(logging.ERROR, logger="paseo.rpc"):
        assert _call(table, "local", "demo.local", {})["error"]["data"]["code"] == "internal_error"
    assert "demo.local" in caplog.text
    assert _call(table, "local", "demo.echo", {"text": "x"})["result"] == {"echo": "x"}


def test_a_stub_the_loaded_group_lacks_answers_an_internal_error() -> None:
    group = _Group(
        [RpcMethod("demo.echo", _echo, EchoParams, access=OWNER)],
        [RpcMethodStub("demo.echo", OWNER), RpcMethodStub("demo.gone", OWNER)],
    )
    table = MethodTable()
    table.add_group(group.lazy, "kernel")
    assert _call(table, "local", "demo.gone", {})["error"]["data"]["code"] == "internal_error"
    assert _call(table, "local", "demo.echo", {"text": "y"})["result"] == {"echo": "y"}


def test_a_group_that_fails_to_load_is_tried_again_on_the_next_call() -> None:
    group = _demo()
    failures = [ImportError("not yet")]
    load = group.load

    def flaky() -> RpcMethodGroup:
        if failures:
            raise failures.pop()
        return load()

    lazy = LazyRpcMethodGroup("demo", group.lazy.methods, flaky)
    table = MethodTable()
    table.add_group(lazy, "kernel")
    assert (
        _call(table, "local", "demo.echo", {"text": "a"})["error"]["data"]["code"]
        == "internal_error"
    )
    assert _call(table, "local", "demo.echo", {"text": "b"})["result"] == {"echo": "b"}


def test_a_lazy_stub_is_refused_like_an_eager_method() -> None:
    table = MethodTable()
    table.add_group(RpcMethodGroup("demo", [RpcMethod("demo.echo", _echo, EchoParams)]), "a")
    lazy = LazyRpcMethodGroup(
        "demo",
        [
            RpcMethodStub("demo.echo"),
            RpcMethodStub("other.x"),
            RpcMethodStub("demo.y", frozenset({"x"})),
        ],
        _demo().load,
    )
    assert table.add_group(lazy, "b") == ["demo.echo", "other.x", "demo.y"]
