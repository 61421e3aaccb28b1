"""A thin synchronous wrapper around :class:`paseo.client.client.PaseoClient`.

The async client runs on a private event loop in a daemon thread, so notifications and
reconnects keep working between calls; every method blocks until its answer (bounded by the
client's timeouts). Notification callbacks run on that private thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from paseo.client.client import GapCallback, NotificationCallback, PaseoClient
from paseo.rpc.models import (
    ConfigGetResult,
    ConfigPatchResult,
    ConfigReloadResult,
    HelloResult,
    PingResult,
    ShutdownResult,
    StatusResult,
    SubscribeResult,
)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


class SyncClient:
    """Same arguments as :class:`PaseoClient`; use as a context manager or call :meth:`close`.

    Connects on construction.
    """

    def __init__(self, host: str | None = None, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="paseo-client", daemon=True
        )
        self._thread.start()
        try:
            self.client = self._run(self._make(host, options))
            self.hello: HelloResult = self._run(self.client.connect())
        except BaseException:
            self._stop_loop()
            raise

    @staticmethod
    async def _make(host: str | None, options: dict[str, Any]) -> PaseoClient:
        # Created on the private loop so its asyncio primitives belong to that loop.
        return PaseoClient(host, **options)

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @staticmethod
    async def _cancel_rest() -> None:
        # websockets leaves keepalive and closing tasks behind; finish them before the loop
        # closes, or they complain about a closed loop at garbage collection.
        current = asyncio.current_task()
        rest = [task for task in asyncio.all_tasks() if task is not current]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    def _stop_loop(self) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._cancel_rest(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        try:
            self._run(self.client.close())
        finally:
            self._stop_loop()

    def call(
        self,
        method: str,
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        result: type[M] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """See :meth:`PaseoClient.call`."""
        return self._run(self.client.call(method, params, result=result, timeout=timeout))

    def on(self, method: str, callback: NotificationCallback) -> Any:
        return self.client.on(method, callback)

    def on_gap(self, callback: GapCallback) -> Any:
        return self.client.on_gap(callback)

    def ping(self, data: str | None = None) -> PingResult:
        return self._run(self.client.ping(data))

    def status(self) -> StatusResult:
        return self._run(self.client.status())

    def shutdown(self, reason: str | None = None) -> ShutdownResult:
        return self._run(self.client.shutdown(reason))

    def subscribe(self, streams: list[str]) -> SubscribeResult:
        return self._run(self.client.subscribe(streams))

    def config_get(self, path: str | None = None) -> ConfigGetResult:
        return self._run(self.client.config_get(path))

    def config_patch(self, patch: Mapping[str, Any]) -> ConfigPatchResult:
        return self._run(self.client.config_patch(patch))

    def config_reload(self) -> ConfigReloadResult:
        return self._run(self.client.config_reload())
