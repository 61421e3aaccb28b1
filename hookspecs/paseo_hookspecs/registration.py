"""Objects that hooks hand over, and the callables they hand them to.

Hooks are synchronous and cheap: a ``paseo_register_*`` implementation calls ``register(obj)``
once per object it contributes and returns. The objects carry the real (usually ``async``) work.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import argparse

    from pydantic import BaseModel

    from paseo_hookspecs.connectors import ClientConnector
    from paseo_hookspecs.context import RpcContext
    from paseo_hookspecs.doctor import DoctorCheck
    from paseo_hookspecs.interfaces.agent import AgentProvider
    from paseo_hookspecs.interfaces.source import PluginSource
    from paseo_hookspecs.interfaces.transport import Transport

SESSION_KINDS = frozenset({"local", "remote", "hub"})
"""Kinds of connection a method may be allowed on. ``local``: a client on this host holding the
local credential; ``remote``: a client authenticated by password; ``hub``: a Paseo Hub."""


@dataclass(frozen=True)
class CliCommandGroup:
    """A ``paseo <name> …`` command group contributed by a plugin.

    ``configure`` receives the group's own sub-parser and adds sub-commands to it. Each
    sub-command sets ``run`` with ``parser.set_defaults(run=func)`` where ``func(args) -> int``
    returns the exit code. Keep module imports inside ``func``: the group is configured only when
    the user invokes it.

    ``parent`` names a kernel command group this one joins as a sub-command instead
    (``CliCommandGroup("pair", …, parent="daemon")`` is ``paseo daemon pair``): ``configure``
    then receives that sub-command's parser and sets ``run`` on it itself. The name must be one
    the kernel group does not use. Plugins are loaded for it only when the user names a
    sub-command the kernel group does not know, or asks for the group's help, so the kernel's
    own sub-commands stay as fast as before.

    .. versionchanged:: 2.0 ``parent``.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    parent: str | None = None


@dataclass(frozen=True)
class RpcMethod:
    """One JSON-RPC method.

    ``name`` is the full dotted name (``area.verb``). ``params`` validates the request params (a
    pydantic model; ``None`` means the method takes none); ``result`` documents the result and is
    used to serialise it. ``handler(ctx, params)`` is awaited; raising a
    :class:`paseo_hookspecs.errors.PaseoError` answers with its code. ``access`` names the session
    kinds (see :data:`SESSION_KINDS`) allowed to call it.

    ``immediate`` declares a handler that answers from memory: it awaits nothing that suspends
    and does not look at its task (no ``asyncio.timeout``, task group or ``current_task``), so
    the daemon runs it inline as the request is read, without a task of its own. One that
    suspends anyway still finishes, in a task.
    """

    name: str
    handler: Callable[[RpcContext, Any], Awaitable[Any]]
    params: type[BaseModel] | None = None
    result: type[BaseModel] | None = None
    summary: str = ""
    access: frozenset[str] = field(default_factory=lambda: frozenset({"local", "remote"}))
    immediate: bool = False


@dataclass(frozen=True)
class RpcMethodGroup:
    """A group of RPC methods sharing the dotted prefix ``area`` (``area.*``)."""

    area: str
    methods: Sequence[RpcMethod]


@dataclass(frozen=True)
class RpcMethodStub:
    """What the daemon knows of a method of a :class:`LazyRpcMethodGroup` before loading it:
    its name, who may call it and whether it is ``immediate`` (as on :class:`RpcMethod`).

    .. versionadded:: 2.2
    """

    name: str
    access: frozenset[str] = field(default_factory=lambda: frozenset({"local", "remote"}))
    immediate: bool = False


@dataclass(frozen=True)
class LazyRpcMethodGroup:
    """A method group whose handlers and models are imported on its first call.

    ``methods`` names every method with its access, so a session's allowlist, ``server.hello``
    and an unknown method's error are answered without loading; ``load()`` imports the real
    group (its params and result models, its handlers) when one of its methods is first called,
    or when the schema is generated. The loaded group must have exactly these methods with the
    same access and ``immediate``: a method that differs is refused (logged), never served with
    an access it did not declare.

    Registering the models of a large group costs memory at every start even when no client
    ever calls it (a pydantic model class is some 10 KiB even with ``defer_build``).

    .. versionadded:: 2.2
    """

    area: str
    methods: Sequence[RpcMethodStub]
    load: Callable[[], RpcMethodGroup]


@dataclass(frozen=True)
class ConfigSection:
    """A plugin's own configuration section.

    Its values live in ``config.json`` at ``plugins.<pluginId>.settings`` and are validated with
    ``model`` when the plugin loads; an invalid section becomes that plugin's load error.

    ``live`` names the settings (top-level fields of ``model``) a ``paseo reload`` applies at
    once: the plugin reads them through ``DaemonContext.config_section`` each time it needs
    them; a change to any other setting is reported as needing a restart. ``local_only`` names
    the settings that widen what the daemon exposes: a remote session may not change them, as
    it may not change ``daemon.listen``.

    .. versionchanged:: 2.0 ``live`` and ``local_only``.
    """

    model: type[BaseModel]
    summary: str = ""
    live: frozenset[str] = frozenset()
    local_only: frozenset[str] = frozenset()


class ProviderRegistrar(Protocol):
    def __call__(self, provider: AgentProvider) -> None:
        """Register an agent provider under ``provider.id``; a duplicate id is refused."""


class TransportRegistrar(Protocol):
    def __call__(self, transport: Transport) -> None:
        """Register a transport under ``transport.name``."""


class ClientConnectorRegistrar(Protocol):
    def __call__(self, connector: ClientConnector) -> None:
        """Register a client connector under ``connector.name`` (since 2.0)."""


class PluginSourceRegistrar(Protocol):
    def __call__(self, source: PluginSource) -> None:
        """Register a managed plugin source under ``source.kind``."""


class CliRegistrar(Protocol):
    def __call__(self, group: CliCommandGroup) -> None:
        """Register a CLI command group; a name the kernel already uses is refused."""


class RpcRegistrar(Protocol):
    def __call__(self, group: RpcMethodGroup | LazyRpcMethodGroup) -> None:
        """Register an RPC method group (loaded now, or on first call); a method name already
        taken is refused."""


class ConfigSectionRegistrar(Protocol):
    def __call__(self, section: ConfigSection) -> None:
        """Register the calling plugin's configuration section."""


class DoctorCheckRegistrar(Protocol):
    def __call__(self, check: DoctorCheck) -> None:
        """Register a ``paseo doctor`` check (since 2.0)."""
