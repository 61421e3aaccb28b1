"""The narrow ports kernel services depend on, and how RPC adapters find their service.

Services never import the daemon, the RPC server or their own adapters. The composition root
(:mod:`paseo.daemon`) builds each service with exactly the ports it needs — the store, a
:class:`Publisher`, a :class:`ConfigView`, other services it uses — and binds each adapter's
:class:`ServiceRef` once the service exists. Ports a single service needs from another room
(for example the agent manager's view of the plugin manager) are Protocols declared by that
service, next to the code that uses them; this module holds only the ones several rooms share.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from paseo.config import ResolvedConfig

S = TypeVar("S")


class Publisher(Protocol):
    """Where a service publishes notifications for subscribed clients.

    Publishing before any transport listens is allowed and drops the event (nobody can have
    subscribed yet); a stream registered early is remembered.
    """

    def register_stream(self, name: str, access: frozenset[str]) -> None:
        """Declare a stream clients may subscribe to (``access``: allowed session kinds)."""

    def publish(self, stream: str, method: str, payload: Mapping[str, Any]) -> None:
        """Send ``method`` with ``payload`` to every session subscribed to ``stream``."""


class ConfigView(Protocol):
    """The configuration in force. Read it at the moment of use: ``paseo reload`` replaces it."""

    @property
    def resolved(self) -> ResolvedConfig:
        """Effective values (file + environment overrides), typed."""


class ServiceRef(Generic[S]):
    """How an RPC adapter reaches its service: bound by the composition root when the service
    is built, so adapters hold no daemon and scan no service list.

    Method groups can be built with an unbound ref (the protocol schema generator does): a call
    through it answers ``unavailable`` instead of failing obscurely.
    """

    __slots__ = ("_name", "_service")

    def __init__(self, name: str) -> None:
        self._name = name
        self._service: S | None = None

    @property
    def name(self) -> str:
        return self._name

    def bind(self, service: S) -> None:
        self._service = service

    def get(self) -> S:
        if self._service is None:
            from paseo_hookspecs.errors import Unavailable

            raise Unavailable(f"the {self._name} service is not running")
        return self._service


__all__ = ["ConfigView", "Publisher", "ServiceRef"]
