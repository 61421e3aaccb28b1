"""A base for providers that run one local program: its argv, environment and model overrides.

Most providers wrap a program (``codex``, ``pi``, ``opencode serve``) and accept the same
overrides from a custom provider entry (``command``, ``env``, ``models``, ``additionalModels``,
see :mod:`paseo_hookspecs.overrides`). :class:`ProgramProvider` keeps them, finds the program on
the configured ``PATH``, merges configured and discovered models, caches discovery, and derives
custom providers, so a subclass writes only what its program does differently::

    class MyProvider(ProgramProvider):
        id = "mine"
        label = "Mine"
        default_command = ("mine",)

        async def discover_models(self, launcher):
            ...  # ask the program, return list[ModelInfo]

        async def availability(self): ...
        async def create_session(self, config, sink, launcher): ...
        async def resume_session(self, handle, config, sink, launcher): ...

A subclass whose constructor takes more than these arguments overrides :meth:`derive`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from paseo_hookspecs.interfaces.agent import AgentProvider, ModelInfo
from paseo_hookspecs.overrides import ProviderOverrides, override_model
from paseo_hookspecs.process import ProcessLauncher

MODELS_TTL = 600.0
"""Seconds a discovered model list is reused: asking a program starts it, which takes seconds."""

DEFAULT_START_TIMEOUT = 60.0
"""Seconds a program may take to answer its first request (slow machines, cold npm caches)."""


class ProgramProvider(AgentProvider):
    """An :class:`AgentProvider` running one program with a custom provider's overrides."""

    default_command: ClassVar[tuple[str, ...]] = ()
    """The argv used when no ``command`` is given (its first item is looked up on ``PATH``)."""
    default_start_timeout: ClassVar[float] = DEFAULT_START_TIMEOUT
    """Seconds the program may take to answer its first request, unless ``start_timeout``."""

    def __init__(
        self,
        *,
        provider_id: str | None = None,
        label: str | None = None,
        command: Sequence[str] | str | None = None,
        env: dict[str, str] | None = None,
        models: list[Any] | None = None,
        additional_models: list[Any] | None = None,
        start_timeout: float | None = None,
    ) -> None:
        if provider_id is not None:
            self.id = provider_id
        if label is not None:
            self.label = label
        if isinstance(command, str):
            command = [command]
        self._command = list(command) if command else list(self.default_command)
        if not self._command:
            raise ValueError(f"{type(self).__name__} names no default_command")
        self._env = dict(env or {})
        self._models = models
        self._additional_models = list(additional_models or [])
        self._start_timeout = (
            start_timeout if start_timeout is not None else self.default_start_timeout
        )
        self._model_cache: tuple[float, list[ModelInfo]] | None = None
        self._model_lock = asyncio.Lock()

    # ------------------------------------------------------------------ the program

    def _program(self) -> str | None:
        """The resolved path of the program, or ``None`` when it cannot be found (looked up on
        the provider's own ``PATH`` when its ``env`` sets one)."""
        search_path = self._env.get("PATH", os.environ.get("PATH", os.defpath))
        return shutil.which(self._command[0], path=search_path)

    # ------------------------------------------------------------------ models

    async def discover_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        """Ask the program for its models (the result is cached for :data:`MODELS_TTL`).
        The default: none; a provider whose program lists models overrides it."""
        return []

    async def list_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        """``models`` when configured (replacing discovery), else the discovered ones; then
        ``additionalModels`` merged by id."""
        if self._models is not None:
            models = [m for m in map(override_model, self._models) if m is not None]
        else:
            models = await self._discovered_models(launcher)
        known = {m.id for m in models}
        for extra in map(override_model, self._additional_models):
            if extra is not None and extra.id not in known:
                models.append(extra)
                known.add(extra.id)
        return models

    async def _discovered_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        # One discovery at a time: concurrent listings share the program started for it.
        async with self._model_lock:
            if self._model_cache and time.monotonic() - self._model_cache[0] < MODELS_TTL:
                return list(self._model_cache[1])
            models = await self.discover_models(launcher)
            self._model_cache = (time.monotonic(), models)
            return list(models)

    # ------------------------------------------------------------------ custom providers

    def derive(self, provider_id: str, label: str, overrides: dict[str, Any]) -> AgentProvider:
        given = ProviderOverrides.parse(provider_id, overrides)
        return type(self)(
            provider_id=provider_id,
            label=label,
            command=given.command or self._command,
            env={**self._env, **given.env},
            models=given.models if given.models is not None else self._models,
            additional_models=[*self._additional_models, *given.additional_models],
            start_timeout=self._start_timeout,
        )


__all__ = ["DEFAULT_START_TIMEOUT", "MODELS_TTL", "ProgramProvider"]
