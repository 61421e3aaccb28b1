"""The kernel's :class:`paseo_hookspecs.providers.ProviderCatalog`: the configured providers'
models and modes for plugins, over the provider registry (what ``provider.models`` answers).

Listing is bounded as the RPC's is: a provider whose program does not answer is
``Unavailable``, never a call that hangs its caller.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol, TypeVar

from paseo_hookspecs.errors import Unavailable

from paseo.agents.registry import LISTING_TIMEOUT

if TYPE_CHECKING:
    from paseo_hookspecs.interfaces.agent import ModeInfo, ModelInfo
    from paseo_hookspecs.process import ProcessLauncher

    from paseo.agents.registry import ProviderRegistry

T = TypeVar("T")


class _Providers(Protocol):
    """What the catalog needs of the agent service (read when asked: both exist once the
    service started)."""

    @property
    def registry(self) -> ProviderRegistry: ...

    @property
    def launcher(self) -> ProcessLauncher: ...


class ProviderCatalog:
    """See the module docstring."""

    def __init__(self, agents: _Providers) -> None:
        self._agents = agents

    async def check(self, provider: str) -> None:
        self._agents.registry.usable(provider)

    async def models(self, provider: str) -> list[ModelInfo]:
        usable = self._agents.registry.usable(provider)
        return await _bounded(provider, usable.list_models(self._agents.launcher))

    async def modes(self, provider: str) -> list[ModeInfo]:
        usable = self._agents.registry.usable(provider)
        return await _bounded(provider, usable.list_modes(self._agents.launcher))


async def _bounded(provider: str, listing: Awaitable[T]) -> T:
    try:
        return await asyncio.wait_for(listing, LISTING_TIMEOUT)
    except TimeoutError:
        raise Unavailable(
            f"provider {provider!r} did not list its models or modes within "
            f"{LISTING_TIMEOUT:.0f}s; see `paseo provider ls`"
        ) from None
