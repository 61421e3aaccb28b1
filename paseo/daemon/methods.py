"""The daemon's own method groups: ``server.*`` and ``config.*``.

Handlers reach the daemon through the :class:`~paseo.services.ServiceRef` the composition root
binds (:func:`kernel_groups`), and the caller's session through the call context.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from paseo_hookspecs.errors import AccessDenied, InvalidParams
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup

from paseo import __version__
from paseo.config import get_path, patch_file
from paseo.config.legacy import MOVED_SECTIONS
from paseo.config.secrets import REDACTED, public_view
from paseo.config.speech_settings import clean_patch
from paseo.daemon.reload import ReloadOutcome, reload_config
from paseo.daemon.restart import restart
from paseo.rpc.errors import InvalidRequest, VersionMismatch
from paseo.rpc.models import (
    PROTOCOL_VERSION,
    ConfigChangedEvent,
    ConfigGetParams,
    ConfigGetResult,
    ConfigPatchParams,
    ConfigPatchResult,
    ConfigReloadResult,
    HelloParams,
    HelloResult,
    PingParams,
    PingResult,
    ShutdownParams,
    ShutdownResult,
    StatusResult,
    StreamPosition,
    SubscribeParams,
    SubscribeResult,
    UnsubscribeResult,
)
from paseo.rpc.session import CallContext, Session
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.daemon.runtime import Daemon
    from paseo.rpc.server import RpcServer

DaemonRef: TypeAlias = ServiceRef["Daemon"]

StreamDeclarer: TypeAlias = Callable[[Sequence[str]], Awaitable[None]]
"""Declares the on-demand streams among some names before a subscription (see
:meth:`paseo.daemon.publisher.ForwardingPublisher.declare`)."""


async def _no_streams_on_demand(names: Sequence[str]) -> None:
    return None


"""How the handlers reach the running daemon (bound by :mod:`paseo.daemon.wiring`)."""

ALL = frozenset({"local", "remote", "hub"})
OWNER = frozenset({"local", "remote"})
LOCAL = frozenset({"local"})

FEATURES: dict[str, bool] = {
    "streams": True,
    "resync": True,
    "configReload": True,
}
"""Capabilities every server of this protocol version has; method areas are added per server."""


def _session(ctx: RpcContext) -> Session:
    if not isinstance(ctx, CallContext):
        raise TypeError("kernel methods run only through the daemon's dispatcher")
    return ctx.session


def _server(daemon: Daemon) -> RpcServer:
    server = daemon.rpc
    if server is None:  # cannot happen: calls arrive through the server
        raise RuntimeError("the RPC server is not running")
    return server


# --- server.* --------------------------------------------------------------------------------


async def hello(ref: DaemonRef, ctx: RpcContext, params: HelloParams) -> HelloResult:
    daemon = ref.get()
    session = _session(ctx)
    if session.hello_done:
        raise InvalidRequest("server.hello was already called on this connection")
    if params.protocolVersion != PROTOCOL_VERSION:
        raise VersionMismatch(
            f"protocol version {params.protocolVersion} is not supported",
            data={"supported": [PROTOCOL_VERSION]},
        )
    session.mark_hello(params.clientId, params.clientType)
    server = _server(daemon)
    features = dict(FEATURES)
    features["passwordAuth"] = server.auth.password_required
    for entry in server.methods:
        features[f"methods.{entry.name.split('.', 1)[0]}"] = True
    return HelloResult(
        serverId=daemon.server_id,
        version=__version__,
        protocolVersion=PROTOCOL_VERSION,
        sessionKind=session.kind,
        features=dict(sorted(features.items())),
        methods=sorted(session.allowed),
    )


async def ping(ctx: RpcContext, params: PingParams) -> dict[str, Any]:
    # The PingResult shape, built from validated params: a model would only be validated
    # and serialised again on the hot probe.
    return {"data": params.data, "time": time.time()}


async def status(ref: DaemonRef, ctx: RpcContext, params: None) -> StatusResult:
    return await ref.get().status()


async def shutdown(ref: DaemonRef, ctx: RpcContext, params: ShutdownParams) -> ShutdownResult:
    daemon = ref.get()
    daemon.log.info(
        "shutdown requested over RPC by %s%s",
        ctx.client_id or "a client",
        f": {params.reason}" if params.reason else "",
    )
    stop = daemon.stop_requested
    loop = asyncio.get_running_loop()
    # Answer first: the stop begins on the next loop turn, and shutdown flushes this answer
    # to the client before closing its connection.
    if stop is not None:
        loop.call_soon(stop.set)
    else:
        loop.call_soon(os.kill, os.getpid(), signal.SIGTERM)
    return ShutdownResult(accepted=True)


async def subscribe(
    declare: StreamDeclarer, ctx: RpcContext, params: SubscribeParams
) -> SubscribeResult:
    await declare(params.streams)
    positions = ctx.subscribe(params.streams)
    return SubscribeResult(
        streams=[StreamPosition(stream=name, seq=seq) for name, seq in positions.items()]
    )


async def unsubscribe(ctx: RpcContext, params: SubscribeParams) -> UnsubscribeResult:
    return UnsubscribeResult(streams=ctx.unsubscribe(params.streams))


# --- config.* --------------------------------------------------------------------------------


async def config_get(ref: DaemonRef, ctx: RpcContext, params: ConfigGetParams) -> ConfigGetResult:
    loaded = ref.get().config
    # Speech sites say hasApiKey; every other secret is masked.
    document: Any = public_view(loaded.document)
    resolved: Any = public_view(loaded.resolved.to_json())
    if params.path:
        try:
            document = _get(document, params.path)
            resolved = _get(resolved, params.path)
        except ValueError as exc:  # a malformed path
            raise InvalidParams(str(exc), data={"path": params.path}) from None
    return ConfigGetResult(
        file=str(loaded.path),
        exists=loaded.exists,
        config=document,
        resolved=resolved,
        envOverrides=loaded.env_overrides,
    )


def _get(data: Any, path: str) -> Any:
    try:
        return get_path(data, path)
    except KeyError:
        return None


def _outcome(outcome: ReloadOutcome) -> dict[str, Any]:
    return {
        "changed": outcome.changed,
        "applied": outcome.applied,
        "restartRequired": outcome.restart_required,
        "warnings": outcome.warnings,
    }


def _announce(server: RpcServer, outcome: ReloadOutcome) -> None:
    if outcome.changed:
        server.publish(
            "config",
            "config.changed",
            {
                "changed": outcome.changed,
                "applied": outcome.applied,
                "restartRequired": outcome.restart_required,
            },
            model=ConfigChangedEvent,
        )


async def config_reload(ref: DaemonRef, ctx: RpcContext, params: None) -> ConfigReloadResult:
    daemon = ref.get()
    async with daemon.config_lock:
        outcome = await reload_config(daemon)
    _announce(_server(daemon), outcome)
    return ConfigReloadResult(**_outcome(outcome))


LOCAL_ONLY_SETTINGS: tuple[tuple[str, ...], ...] = (
    ("daemon", "listen"),
    ("daemon", "hostnames"),
    ("daemon", "cors"),
    ("daemon", "trustedProxies"),
    ("daemon", "relay"),
    ("plugins", "*", "source"),
    ("plugins", "*", "path"),
)
"""The network defences and code sources: a remote session must not be able to open the
daemon wider (or load code) with the access it already has. ``*`` matches any key.
``daemon.auth`` is refused to every session (it is set on the daemon's host). Plugins add the
settings of their ``local_only`` sections (:func:`_local_only_patterns`)."""


def _local_only_patterns(daemon: Daemon) -> tuple[tuple[str, ...], ...]:
    """:data:`LOCAL_ONLY_SETTINGS`, the plugins' ``local_only`` settings, and the old places of
    those that moved into a plugin's section (a patch may still name those)."""
    plugins = daemon.plugins
    sections = plugins.config_sections() if plugins is not None else {}
    guarded = [
        (("plugins", plugin_id, "settings"), key)
        for plugin_id, section in sorted(sections.items())
        for key in sorted(section.local_only)
    ]
    patterns: list[tuple[str, ...]] = [(*where, key) for where, key in guarded]
    patterns += [
        (*old, key) for old, new in MOVED_SECTIONS for where, key in guarded if new == where
    ]
    return (*LOCAL_ONLY_SETTINGS, *patterns)


def _touched(patch: Any, pattern: tuple[str, ...], at: tuple[str, ...] = ()) -> str | None:
    """The path at which ``patch`` changes a setting matched by ``pattern``, else ``None``.

    A patch value that is not an object replaces (or, ``null``, removes) everything below it,
    so it touches every setting under its key.
    """
    if not pattern:
        return ".".join(at)
    if not isinstance(patch, dict):
        return ".".join(at)
    head, rest = pattern[0], pattern[1:]
    keys = list(patch) if head == "*" else [head] if head in patch else []
    for key in keys:
        found = _touched(patch[key], rest, (*at, key))
        if found is not None:
            return found
    return None


def _check_patch_access(
    patch: dict[str, Any],
    session_kind: str,
    local_only: tuple[tuple[str, ...], ...] = LOCAL_ONLY_SETTINGS,
) -> None:
    auth = _touched(patch, ("daemon", "auth"))
    if auth is not None:
        raise AccessDenied(
            f"{auth} would change daemon.auth, which cannot be changed over the wire; "
            "use `paseo daemon set-password` on the daemon's host",
            data={"path": auth},
        )
    if session_kind == "local":
        return
    for pattern in local_only:
        path = _touched(patch, pattern)
        if path is not None:
            raise AccessDenied(
                f"{path} is a security setting: only a local session may change it",
                data={"path": path},
            )


async def config_patch(
    ref: DaemonRef, ctx: RpcContext, params: ConfigPatchParams
) -> ConfigPatchResult:
    daemon = ref.get()
    _check_patch_access(params.patch, ctx.session_kind, _local_only_patterns(daemon))
    # A client re-saving what it read sends hasApiKey (and maybe placeholders) back.
    changes = clean_patch(params.patch, REDACTED)
    async with daemon.config_lock:
        written = await asyncio.to_thread(patch_file, daemon.layout.config, changes)
        outcome = await reload_config(daemon)
    _announce(_server(daemon), outcome)
    return ConfigPatchResult(config=public_view(written.document), **_outcome(outcome))


def kernel_groups(
    ref: DaemonRef, declare: StreamDeclarer = _no_streams_on_demand
) -> list[RpcMethodGroup]:
    """The ``server`` and ``config`` method groups, reaching the daemon through ``ref``;
    ``declare`` runs before every subscription."""

    def bound(handler: Callable[..., Awaitable[Any]]) -> Callable[[Any, Any], Awaitable[Any]]:
        return functools.partial(handler, ref)

    return [
        RpcMethodGroup(
            "server",
            [
                RpcMethod(
                    "server.hello",
                    bound(hello),
                    HelloParams,
                    HelloResult,
                    access=ALL,
                    summary="Identify the client; must be the first call on a connection",
                ),
                RpcMethod(
                    "server.ping",
                    ping,
                    PingParams,
                    PingResult,
                    access=ALL,
                    summary="Round-trip probe; echoes data",
                    immediate=True,
                ),
                RpcMethod(
                    "server.status",
                    bound(status),
                    None,
                    StatusResult,
                    access=OWNER,
                    summary="Pid, listen addresses, uptime, version, plugins and counts",
                ),
                RpcMethod(
                    "server.shutdown",
                    bound(shutdown),
                    ShutdownParams,
                    ShutdownResult,
                    access=LOCAL,
                    summary="Stop the daemon gracefully (answered before it stops)",
                ),
                RpcMethod(
                    "server.restart",
                    bound(restart),
                    ShutdownParams,
                    ShutdownResult,
                    access=LOCAL,
                    summary="Restart the daemon as `paseo daemon restart` does (refused, "
                    "nothing stopped, when config.json would not start)",
                ),
                RpcMethod(
                    "server.subscribe",
                    functools.partial(subscribe, declare),
                    SubscribeParams,
                    SubscribeResult,
                    access=OWNER,
                    summary="Receive the notifications of the named streams",
                ),
                RpcMethod(
                    "server.unsubscribe",
                    unsubscribe,
                    SubscribeParams,
                    UnsubscribeResult,
                    access=OWNER,
                    summary="Stop receiving the named streams",
                ),
            ],
        ),
        RpcMethodGroup(
            "config",
            [
                RpcMethod(
                    "config.get",
                    bound(config_get),
                    ConfigGetParams,
                    ConfigGetResult,
                    access=OWNER,
                    summary="The loaded config.json and the effective values",
                ),
                RpcMethod(
                    "config.patch",
                    bound(config_patch),
                    ConfigPatchParams,
                    ConfigPatchResult,
                    access=OWNER,
                    summary="Persist a deep-merge patch to config.json, then reload",
                ),
                RpcMethod(
                    "config.reload",
                    bound(config_reload),
                    None,
                    ConfigReloadResult,
                    access=OWNER,
                    summary="Re-read config.json; apply runtime-safe changes live",
                ),
            ],
        ),
    ]
