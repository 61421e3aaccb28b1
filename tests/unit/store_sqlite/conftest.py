"""Helpers for the sqlite driver's own tests: run an async body against an open store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from paseo_store_sqlite import SqliteStore

T = TypeVar("T")

TEST_TIMEOUT = 60.0


def _run(coro: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coro, TEST_TIMEOUT)

    return asyncio.run(bounded())


@pytest.fixture
def arun() -> Callable[[Awaitable[T]], T]:
    """Run a coroutine on a fresh event loop with a bounded deadline."""
    return _run


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "paseo-home"
    path.mkdir()
    return path


StoreBody = Callable[[SqliteStore], Awaitable[Any]]


@pytest.fixture
def with_store(home: Path) -> Callable[[StoreBody], Any]:
    """Call ``with_store(body)`` to run ``await body(store)`` on an open store, closed after."""

    def call(body: StoreBody) -> Any:
        async def main() -> Any:
            store = SqliteStore(home)
            await store.open()
            try:
                return await body(store)
            finally:
                await store.close()

        return _run(main())

    return call
