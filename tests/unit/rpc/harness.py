"""The server side a :class:`paseo.rpc.session.Session` needs, for unit tests of the session:
``server.ping`` as its only method (or the given table) and a count of the bytes queued."""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo.daemon.methods import ping
from paseo.rpc.dispatch import MethodTable
from paseo.rpc.models import PingParams, PingResult
from paseo.rpc.session import Session


def ping_table() -> MethodTable:
    methods = MethodTable()
    methods.add_group(
        RpcMethodGroup("server", [RpcMethod("server.ping", ping, PingParams, PingResult)]),
        "kernel",
    )
    return methods


class SessionHost:
    def __init__(self, methods: MethodTable | None = None) -> None:
        self.methods = methods if methods is not None else ping_table()
        self.accepting = True
        self.context: Any = None
        self.outbound_bytes = 0

    def session_ended(self, session: Session) -> None:
        pass

    def stream_position(self, name: str) -> tuple[frozenset[str], int] | None:
        return None

    def make_room(self, size: int, limit: int) -> None:
        pass

    def outbound_changed(self, delta: int) -> None:
        self.outbound_bytes += delta
