"""A large payload answered many times is held once: 200 queued ``project.icon`` answers to a
client that does not read cost about one icon, and the byte bounds still count each whole."""

from __future__ import annotations

import asyncio
import base64
import json
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

from paseo_hookspecs.transport import Observed, SessionLimits
from paseo_store_json import JsonStore
from unit.rpc.harness import SessionHost

from paseo.projects.icons import IconStore
from paseo.projects.service import ProjectRegistry
from paseo.rpc.dispatch import MethodTable
from paseo.rpc.session import Session
from paseo.workspaces.project_rpc import project_group

ICON_BYTES = 256 * 1024
ANSWERS = 200


def png(size: int) -> bytes:
    # A PNG signature and a body that does not repeat (so nothing can share it by accident).
    body = bytes((i * 7 + i // 251) % 256 for i in range(size - 8))
    return b"\x89PNG\r\n\x1a\n" + body


class Host(SessionHost):
    """The real project methods, and an event once ``threshold`` bytes are queued."""

    def __init__(self, methods: MethodTable, threshold: int) -> None:
        super().__init__(methods)
        self._threshold = threshold
        self.all_queued = asyncio.Event()

    def outbound_changed(self, delta: int) -> None:
        super().outbound_changed(delta)
        if self.outbound_bytes >= self._threshold:
            self.all_queued.set()


class NeverRead:
    """A client that never reads: the first write never completes."""

    def __init__(self) -> None:
        self._never = asyncio.Event()

    async def send(self, text: str) -> None:
        await self._never.wait()

    async def close(self, code: int, reason: str) -> None:
        self._never.set()


def test_queued_icon_answers_share_one_copy_of_the_icon(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = tmp_path / "project"
    root.mkdir()
    encoded_len = len(base64.b64encode(png(ICON_BYTES)))

    async def scenario() -> tuple[int, int]:
        store = JsonStore(home)
        await store.open()
        try:
            registry = ProjectRegistry(store, IconStore(home / "projects" / "icons"))
            project, _ = await registry.add(str(root))
            await registry.set_icon(project.projectId, png(ICON_BYTES))
            placement = SimpleNamespace(projects=registry)
            methods = MethodTable()
            methods.add_group(
                project_group(SimpleNamespace(get=lambda: SimpleNamespace(placement=placement))),  # type: ignore[arg-type]
                "kernel",
            )
            host = Host(methods, ANSWERS * encoded_len)
            session = Session(
                host,
                kind="local",
                channel=NeverRead(),
                observed=Observed(
                    transport="unix", unix_socket=True, peer=None, client_address=None, origin=None
                ),
                limits=SessionLimits(
                    outbound_queue=10 * ANSWERS,
                    outbound_bytes=1 << 40,
                    outbound_bytes_total=1 << 40,
                    max_in_flight=10 * ANSWERS,
                    rate_burst=10 * ANSWERS,
                ),
            )
            session.mark_hello("shared-payloads", "test")
            runner = asyncio.get_running_loop().create_task(session.run())
            frame = {"jsonrpc": "2.0", "method": "project.icon"}
            params = {"projectId": project.projectId}
            before = tracemalloc.get_traced_memory()[0]
            for request_id in range(ANSWERS):
                session.receive(json.dumps({**frame, "id": request_id, "params": params}))
            await asyncio.wait_for(host.all_queued.wait(), 60)
            held = tracemalloc.get_traced_memory()[0] - before
            queued = session.queued_bytes
            session.connection_lost()
            await runner
            return held, queued
        finally:
            await store.close()

    tracemalloc.start()
    try:
        held, queued = asyncio.run(scenario())
    finally:
        tracemalloc.stop()
    # The bounds count every answer whole...
    assert queued >= ANSWERS * encoded_len, queued
    # ...but the memory held is about one encoded icon (plus the one being written and the
    # small per-answer frames), not one per answer (that would be 200x).
    assert held < 8 * encoded_len, (held, encoded_len)
