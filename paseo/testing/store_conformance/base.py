"""What every part of the suite builds on: the driver hooks, :func:`store_test` and the
records several parts seed a store with."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, ClassVar

import pytest
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.records import WorkspaceRecord

from paseo.testing.store_conformance.records import (
    _agent,
    _entries,
    agent_data,
    iso,
    workspace_data,
)

_StoreTestBody = Callable[[Any, Store], Coroutine[Any, Any, None]]


def store_test(body: _StoreTestBody) -> Callable[[Any, Path], None]:
    """Turn ``async def test_x(self, store)`` into a synchronous pytest test.

    The wrapper runs the body in a fresh event loop with a freshly opened store on an empty home
    under ``tmp_path``, bounded by the class's ``test_timeout``, and closes every store the test
    opened. Its signature is deliberately ``(self, tmp_path)`` so pytest injects only that.
    """

    def test(self: StoreSuite, tmp_path: Path) -> None:
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


class StoreSuite:
    """The driver hooks every part of the suite uses; :attr:`driver` names the driver."""

    driver: ClassVar[type[Store] | str]
    """The driver class, or its name in the ``paseo.store`` entry-point group."""

    settings: ClassVar[Any] = None
    """Passed as ``settings`` to the driver's constructor."""

    concurrency: ClassVar[int] = 100
    """How many concurrent writers the concurrency tests start."""

    test_timeout: ClassVar[float] = 120.0
    """Upper bound, in seconds, on one test's body."""

    _opened: list[Store]


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

    # -- records several parts seed a store with ---------------------------------------------

    async def _agent_with_timeline(self, store: Store, seqs: Iterable[int]) -> str:
        data = agent_data()
        await store.agents.insert(_agent(data))
        await store.timeline.append(_entries(data["id"], seqs))
        return str(data["id"])

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
