"""Writing and deleting the durable record of a live process (``store.managed_processes``)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Sequence
from typing import Any

from paseo_hookspecs.records import (
    ManagedProcessDaemon,
    ManagedProcessOwner,
    ManagedProcessRecord,
)
from paseo_hookspecs.store import ManagedProcessRepository

from paseo.processes.identity import iso_now, process_identity


class ProcessRecords:
    """Writes and deletes the records of one kind of live process (``owner.kind``), each owned
    by ``provider`` unless :meth:`record` names another."""

    def __init__(
        self, repository: ManagedProcessRepository, *, kind: str, provider: str | None = None
    ) -> None:
        self._repository = repository
        self._kind = kind
        self._provider = provider
        self._instance = uuid.uuid4().hex
        self._daemon: ManagedProcessDaemon | None = None

    @property
    def kind(self) -> str:
        return self._kind

    async def _daemon_block(self) -> ManagedProcessDaemon:
        if self._daemon is None:
            identity = await asyncio.to_thread(process_identity, os.getpid())
            self._daemon = ManagedProcessDaemon(
                instanceId=self._instance,
                pid=os.getpid(),
                identity=identity,
                bootId=identity.bootId,
                recordedAt=iso_now(),
            )
        return self._daemon

    async def record(
        self,
        pid: int,
        argv: Sequence[str],
        metadata: dict[str, Any],
        *,
        provider: str | None = None,
    ) -> str | None:
        """Durably record live process ``pid`` (owned by ``provider`` when given, else the
        one this writer was made for; one of them is required); its record id, or ``None``
        when it already exited (nothing can be orphaned then)."""
        import psutil

        try:
            identity = await asyncio.to_thread(process_identity, pid)
        except psutil.NoSuchProcess:
            return None
        record = ManagedProcessRecord(
            id=uuid.uuid4().hex,
            owner=ManagedProcessOwner(provider=provider or self._provider or "", kind=self._kind),
            pid=pid,
            command=argv[0],
            args=list(argv[1:]),
            metadata=metadata,
            identity=identity,
            daemon=await self._daemon_block(),
            createdAt=iso_now(),
        )
        await self._repository.put(record)
        return record.id

    async def forget(self, record_id: str) -> None:
        """The process and its session are reaped: delete the record."""
        await self._repository.delete(record_id)
