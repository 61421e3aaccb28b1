"""The provider registry: plugin providers, custom providers from config, and availability.

Plugin providers come from ``paseo_register_providers``. ``agents.providers.<id>`` in
``config.json`` adds custom providers (``extends`` a registered id, with a ``label`` and
optional command, env, models, additionalModels, disallowedTools) made with
:meth:`AgentProvider.derive`, and tunes any provider (``enabled``, ``order``, ``label``). The
config is re-read on every use, so ``paseo reload`` applies provider changes.

Providers declared by plugin manifests arrive as custom-provider entries of the same shape
(``extends: "acp"``, label, command, env; see :mod:`paseo.plugins.manifests`). A config.json
entry with the same id is laid over the declared one key by key, so config wins (config.json
validation wants such an entry complete: ``extends``, ``label`` and ``command``); ``env`` it
leaves out stays the manifest's.

Availability is a snapshot (``ready``, ``loading``, ``error``, ``unavailable`` with a reason)
probed in the background, never on a caller's path unless asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from paseo_hookspecs.errors import InvalidParams, PaseoError, Unavailable
from paseo_hookspecs.interfaces.agent import AgentProvider, Availability

from paseo.agents.tracker import iso_now

log = logging.getLogger("paseo.agents.registry")

PROBE_TIMEOUT = 15.0
"""Bound on one provider's availability probe."""

LISTING_TIMEOUT = 90.0
"""Bound on one provider's model or mode listing. Listing may start the agent's program (an
ACP probe session allows itself 60 s): this bound is above every built-in provider's own, so
the provider's timeout and its message come first and this one only stops a provider that
never answers."""

REFRESH_INTERVAL = 300.0
"""Seconds between background availability probes."""


@dataclass
class ProviderEntry:
    """One provider as the registry exposes it."""

    id: str
    label: str
    provider: AgentProvider | None
    """``None`` when a custom provider could not be derived (see ``problem``)."""
    extends: str | None
    enabled: bool
    order: float | None
    problem: str | None = None


@dataclass
class Snapshot:
    availability: Availability
    checked_at: str | None


class ProviderRegistry:
    """See the module docstring. ``overrides`` returns ``agents.providers`` as plain dicts."""

    def __init__(
        self,
        plugin_providers: Mapping[str, AgentProvider] | Callable[[], Mapping[str, AgentProvider]],
        overrides: Callable[[], Mapping[str, Mapping[str, Any]]],
        declared: Mapping[str, Mapping[str, Any]] | None = None,
        default: Callable[[], str | None] = lambda: None,
    ) -> None:
        # A callable is resolved on first use: provider modules are then imported by the
        # background availability refresh (or the first agent request), not on the daemon's
        # path to accepting connections.
        self._plugin_source = plugin_providers
        self._plugin_cache: dict[str, AgentProvider] | None = None
        self._config = overrides
        self._default = default
        self._declared_source = dict(declared or {})
        self._derived: dict[str, tuple[str, AgentProvider | None, str | None]] = {}
        self._snapshot: dict[str, Snapshot] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    # ------------------------------------------------------------------ providers

    @property
    def _plugins(self) -> dict[str, AgentProvider]:
        if self._plugin_cache is None:
            source = self._plugin_source
            self._plugin_cache = dict(source() if callable(source) else source)
        return self._plugin_cache

    @property
    def _declared(self) -> dict[str, dict[str, Any]]:
        # A declared id that a plugin provider has was refused when plugins loaded; skipping it
        # here keeps a plugin provider from ever being replaced by a manifest.
        return {
            provider_id: dict(entry)
            for provider_id, entry in self._declared_source.items()
            if provider_id not in self._plugins
        }

    def _overrides(self) -> dict[str, dict[str, Any]]:
        """``agents.providers`` from config.json laid over the declared providers."""
        merged = {provider_id: dict(entry) for provider_id, entry in self._declared.items()}
        for provider_id, entry in self._config().items():
            merged[provider_id] = {**merged.get(provider_id, {}), **entry}
        return merged

    def entries(self) -> list[ProviderEntry]:
        """Every provider, in display order (``order``, then id)."""
        overrides = self._overrides()
        result: dict[str, ProviderEntry] = {}
        for provider_id, provider in self._plugins.items():
            entry = dict(overrides.get(provider_id) or {})
            result[provider_id] = ProviderEntry(
                id=provider_id,
                label=str(entry.get("label") or provider.label),
                provider=self._tuned(provider_id, provider, entry),
                extends=None,
                enabled=entry.get("enabled") is not False,
                order=entry.get("order"),
            )
        for provider_id, raw in overrides.items():
            entry = dict(raw)
            base_id = entry.get("extends")
            if provider_id in self._plugins or not base_id:
                continue
            derived, problem = self._derive(provider_id, str(base_id), entry)
            result[provider_id] = ProviderEntry(
                id=provider_id,
                label=str(entry.get("label") or provider_id),
                provider=derived,
                extends=str(base_id),
                enabled=entry.get("enabled") is not False,
                order=entry.get("order"),
                problem=problem,
            )
        return sorted(
            result.values(),
            key=lambda e: (math.inf if e.order is None else float(e.order), e.id),
        )

    def _tuned(
        self, provider_id: str, provider: AgentProvider, entry: dict[str, Any]
    ) -> AgentProvider:
        """A plugin provider with the overrides config.json sets for it (command, env, …)."""
        if not any(entry.get(key) is not None for key in _DERIVE_KEYS):
            return provider
        derived, problem = self._derive(provider_id, provider_id, entry, base=provider)
        if derived is None:
            log.warning("agents.providers.%s ignored: %s", provider_id, problem)
            return provider
        return derived

    def _derive(
        self,
        provider_id: str,
        base_id: str,
        entry: dict[str, Any],
        *,
        base: AgentProvider | None = None,
    ) -> tuple[AgentProvider | None, str | None]:
        key = json.dumps([base_id, entry], sort_keys=True, default=str)
        cached = self._derived.get(provider_id)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        parent = base or self._plugins.get(base_id)
        derived: AgentProvider | None = None
        problem: str | None = None
        where = f"agents.providers.{provider_id}"
        if entry.get("plugin"):
            where = f"provider {provider_id} (declared by plugin {entry['plugin']})"
        if parent is None:
            problem = (
                f"{where} extends {base_id!r}, which is not installed "
                f"(installed: {', '.join(sorted(self._plugins)) or 'none'})"
            )
        else:
            label = str(entry.get("label") or parent.label)
            overrides = {k: v for k, v in entry.items() if k in _DERIVE_KEYS and v is not None}
            try:
                derived = parent.derive(provider_id, label, overrides)
            except PaseoError as exc:
                problem = f"{where}: {exc.message}"
            except Exception as exc:
                log.exception("deriving provider %s from %s failed", provider_id, base_id)
                problem = f"{where}: {base_id} failed to derive it ({exc})"
        self._derived[provider_id] = (key, derived, problem)
        return derived, problem

    def entry(self, provider_id: str) -> ProviderEntry:
        """The provider named ``provider_id``; ``InvalidParams`` (listing the known ones) when
        there is none."""
        entries = self.entries()
        for entry in entries:
            if entry.id == provider_id:
                return entry
        known = ", ".join(e.id for e in entries) or "none installed"
        raise InvalidParams(
            f"unknown provider {provider_id!r} (known: {known}); "
            "see `paseo provider ls`, or define it under agents.providers in config.json",
            data={"provider": provider_id},
        )

    def usable(self, provider_id: str) -> AgentProvider:
        """The provider to start sessions with; ``InvalidParams`` when it is unknown, disabled
        or misconfigured."""
        entry = self.entry(provider_id)
        if not entry.enabled:
            raise InvalidParams(
                f"provider {provider_id!r} is disabled (agents.providers.{provider_id}.enabled "
                "in config.json)"
            )
        if entry.provider is None:
            raise InvalidParams(entry.problem or f"provider {provider_id!r} is not usable")
        return entry.provider

    # --------------------------------------------------------------- availability

    def availability(self, provider_id: str) -> Snapshot:
        """The last probe of ``provider_id`` (``loading`` before the first one finished)."""
        return self._snapshot.get(provider_id) or Snapshot(Availability(status="loading"), None)

    def default_provider(self) -> str | None:
        """The provider for an agent that names none.

        ``agents.defaultProvider`` when config.json sets it (even while it is not ready: the
        user chose it, and creating the agent then says why it cannot start). Otherwise the
        first enabled, ready provider by ``order``, plugin providers before custom
        (``extends``) ones, then by id: adding a custom provider never changes the default
        unless it asks to with ``order``.
        """
        chosen = self._default()
        if chosen:
            return chosen
        ranked = sorted(
            self.entries(),
            key=lambda e: (
                math.inf if e.order is None else float(e.order),
                e.extends is not None,
                e.id,
            ),
        )
        for entry in ranked:
            ready = self.availability(entry.id).availability.status == "ready"
            if entry.enabled and entry.provider is not None and ready:
                return entry.id
        return None

    async def probe(self, entry: ProviderEntry) -> Snapshot:
        """Probe one provider now and remember the result."""
        if not entry.enabled:
            availability = Availability(
                status="unavailable",
                reason=f"disabled in config.json (agents.providers.{entry.id}.enabled)",
            )
        elif entry.provider is None:
            availability = Availability(status="error", reason=entry.problem)
        else:
            try:
                availability = await asyncio.wait_for(entry.provider.availability(), PROBE_TIMEOUT)
            except TimeoutError:
                availability = Availability(
                    status="error",
                    reason=f"the availability check did not answer within {PROBE_TIMEOUT:.0f}s",
                )
            except Exception as exc:
                log.exception("availability of provider %s failed", entry.id)
                availability = Availability(status="error", reason=f"availability check: {exc}")
        snapshot = Snapshot(availability, iso_now())
        self._snapshot[entry.id] = snapshot
        return snapshot

    async def refresh(self) -> None:
        """Probe every provider concurrently."""
        entries = self.entries()
        await asyncio.gather(*(self.probe(entry) for entry in entries))
        known = {entry.id for entry in entries}
        for stale in set(self._snapshot) - known:
            del self._snapshot[stale]

    def request_refresh(self) -> None:
        """Ask the background loop to probe again soon."""
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception:
                log.exception("provider availability refresh failed")
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), REFRESH_INTERVAL)

    def start(self) -> None:
        """Start background probing."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


_DERIVE_KEYS = frozenset(
    {"command", "env", "models", "additionalModels", "disallowedTools", "description"}
)
"""Override keys handed to :meth:`AgentProvider.derive` (the rest are the registry's own)."""


T = TypeVar("T")


async def listing(provider_id: str, listing: Awaitable[T]) -> T:
    """``listing`` bounded by :data:`LISTING_TIMEOUT`; a provider that does not answer is
    ``Unavailable``, not an internal error."""
    try:
        return await asyncio.wait_for(listing, LISTING_TIMEOUT)
    except TimeoutError:
        raise Unavailable(
            f"provider {provider_id!r} did not list its models, modes or features within "
            f"{LISTING_TIMEOUT:.0f}s; see `paseo provider ls`"
        ) from None
