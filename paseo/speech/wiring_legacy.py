"""TEMPORARY: builds :class:`SpeechService` from the running daemon until the composition root
in :mod:`paseo.daemon` builds it from ports. Listed in ``SERVICE_FACTORIES``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo.services import ServiceRef
from paseo.speech.rpc import method_groups, notifications
from paseo.speech.service import SpeechService

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup

    from paseo.config import ResolvedConfig


class _LiveConfig:
    """The daemon's configuration, read at each use (``paseo reload`` replaces it)."""

    def __init__(self, daemon: Any) -> None:
        self._daemon = daemon

    @property
    def resolved(self) -> ResolvedConfig:
        resolved: ResolvedConfig = self._daemon.config.resolved
        return resolved


class _WiredSpeech(SpeechService):
    def __init__(self, daemon: Any) -> None:
        from paseo.plugins.drivers import load_driver

        super().__init__(_LiveConfig(daemon), load_driver)
        self._ref: ServiceRef[SpeechService] = ServiceRef("speech")
        self._ref.bind(self)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        return method_groups(self._ref)


def create(daemon: Any) -> SpeechService:
    """Service factory (see :mod:`paseo.daemon.services`)."""
    return _WiredSpeech(daemon)


def rpc_groups() -> list[RpcMethodGroup]:
    """The method groups with an unbound ref, for the protocol schema."""
    return method_groups(ServiceRef("speech"))


__all__ = ["create", "notifications", "rpc_groups"]
