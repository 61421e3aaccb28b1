"""What only the running daemon can tell: that it answers, which plugins failed to load, that
its MCP endpoint is served to agents, and the Hub relationship.

MCP and the Hub are plugins; the kernel imports neither. It looks at them as a client does:
the MCP endpoint by the documented path agents are given (``docs/mcp.md``), the Hub by its
documented RPC method. Either being absent (plugin disabled, not installed) is said, not failed.
"""

from __future__ import annotations

from typing import Any

from paseo.doctor.model import Check, DoctorContext

MCP_PATH = "/mcp/agents"
"""Where the MCP plugin serves agents (``docs/mcp.md``, "Endpoint")."""
HUB_STATUS = "hub.relationship.get_status"
"""The Hub plugin's status method (``docs/hub.md``)."""
PROBE_WAIT = 5.0

_START = "`paseo daemon start`"


def _not_running(group: str, name: str, what: str) -> Check:
    return Check(
        group,
        name,
        "warn",
        f"not checked: the daemon is not running ({what} is known only to a running daemon)",
        f"{_START}, then `paseo doctor` again",
    )


def daemon_checks(context: DoctorContext) -> list[Check]:
    if not context.running:
        note = f" ({context.daemon_note})" if context.daemon_note else ""
        return [
            Check(
                "daemon",
                "daemon",
                "ok",
                f"not running{note}: the checks that need it say so",
            )
        ]
    pid = context.pid_info.get("pid")
    if context.status is None:
        return [
            Check(
                "daemon",
                "daemon",
                "fail",
                f"the daemon (pid {pid}) holds the home but does not answer: {context.daemon_note}",
                "`paseo daemon restart` (or `paseo daemon stop --force` if it will not stop); "
                "`$PASEO_HOME/daemon.log` says what it was doing",
            )
        ]
    status = context.status
    results = [
        Check(
            "daemon",
            "daemon",
            "ok",
            f"running: pid {status.get('pid', pid)}, version {status.get('version')}, "
            f"store {status.get('storageDriver')}",
        )
    ]
    plugins: Any = status.get("plugins") or {}
    for failure in plugins.get("failed") or []:
        name = failure.get("name", "?")
        results.append(
            Check(
                "daemon",
                f"plugin {name}",
                "fail",
                f"plugin {name!r} failed to load: {failure.get('error')}",
                f"`paseo plugins info {name}`; fix or reinstall it, or "
                f"`paseo plugins disable {name}`, then `paseo daemon restart`",
            )
        )
    return results


def _mcp_address(context: DoctorContext) -> Any:
    """The daemon's first TCP listen address (MCP is served on TCP only), or ``None``."""
    from paseo.rpc.address import AddressError, parse_address

    listening = (context.status or {}).get("listen") or []
    for text in [*listening, context.rpc_listen]:
        if not isinstance(text, str) or not text:
            continue
        try:
            address = parse_address(text)
        except AddressError:
            continue
        if address.path is None:
            return address
    return None


def mcp_checks(context: DoctorContext) -> list[Check]:
    from paseo.client.quick import get_json

    if not context.answering:
        return [_not_running("mcp", "mcp endpoint", "whether agents reach the MCP endpoint")]
    address = _mcp_address(context)
    if address is None:
        return [
            Check(
                "mcp",
                "mcp endpoint",
                "warn",
                "the daemon listens on a unix socket only: agents get no Paseo MCP server "
                "(their programs speak MCP over HTTP)",
                "listen on TCP as well: `paseo config set daemon.listen 127.0.0.1:6767`, then "
                "`paseo daemon restart`",
            )
        ]
    url = f"http://{address.listen_form()}{MCP_PATH}"
    try:
        # As an agent would, but with no token: a served endpoint refuses it with 401.
        code, _ = get_json(address, MCP_PATH, timeout=PROBE_WAIT)
    except OSError as exc:
        return [
            Check(
                "mcp",
                "mcp endpoint",
                "fail",
                f"{url} cannot be reached: {exc}",
                "`paseo daemon restart`; `$PASEO_HOME/daemon.log` says why the listener fails",
            )
        ]
    if code == 401:
        return [
            Check(
                "mcp",
                "mcp endpoint",
                "ok",
                f"{url} is served (a request without an agent's token is refused with 401)",
            )
        ]
    if code == 404:
        return [
            Check(
                "mcp",
                "mcp endpoint",
                "warn",
                f"{url} is not served: agents get no Paseo MCP server (the mcp plugin is "
                "disabled or not loaded)",
                "start the daemon without `--no-mcp` / `--disable-plugin mcp`, and unset "
                "`plugins.mcp.settings.enabled: false` and PASEO_MCP=false if set",
            )
        ]
    return [
        Check(
            "mcp",
            "mcp endpoint",
            "fail",
            f"{url} answered HTTP {code} to a request without a token (401 expected)",
            "check `daemon.hostnames` allows 127.0.0.1 and that no proxy sits in front; "
            "`$PASEO_HOME/daemon.log` has the details",
        )
    ]


def _hub_status(context: DoctorContext) -> dict[str, Any] | str | None:
    """The relationship's status, ``None`` when no Hub plugin serves it, or why it failed."""
    from paseo_hookspecs.errors import PaseoError

    from paseo.client.light import LightClient

    try:
        with LightClient(None, home=context.home, env={}, request_timeout=PROBE_WAIT) as client:
            result = client.call(HUB_STATUS)
    except PaseoError as exc:
        if exc.code == "method_not_found":
            return None
        return f"{exc.code}: {exc}"
    except (OSError, TimeoutError) as exc:
        return str(exc)
    return result if isinstance(result, dict) else str(result)


def hub_checks(context: DoctorContext) -> list[Check]:
    if not context.answering:
        return [_not_running("hub", "hub relationship", "the Hub relationship")]
    status = _hub_status(context)
    if status is None:
        return [Check("hub", "hub relationship", "ok", "no Hub plugin loaded: no relationship")]
    if isinstance(status, str):
        return [
            Check(
                "hub",
                "hub relationship",
                "fail",
                f"the Hub relationship's status cannot be read: {status}",
                "`paseo hub status`; `$PASEO_HOME/daemon.log` has the details",
            )
        ]
    state = status.get("state")
    origin = status.get("hubOrigin")
    where = f" with {origin}" if origin else ""
    if state == "not_connected":
        return [
            Check(
                "hub",
                "hub relationship",
                "ok",
                "not connected to a Hub (`paseo hub connect URL --token TOKEN` enrolls)",
            )
        ]
    if state == "connected":
        return [Check("hub", "hub relationship", "ok", f"connected{where}")]
    if state in ("connecting", "reconnecting"):
        error = status.get("lastError")
        return [
            Check(
                "hub",
                "hub relationship",
                "warn",
                f"{state}{where}" + (f": {error}" if error else ""),
                "wait a moment; if it stays so, check the network to the Hub and "
                "`paseo hub status`",
            )
        ]
    if state == "revoked":
        return [
            Check(
                "hub",
                "hub relationship",
                "warn",
                f"the Hub{where} revoked this daemon",
                "`paseo hub disconnect`, then `paseo hub connect URL --token TOKEN` with a new "
                "token",
            )
        ]
    return [
        Check(
            "hub",
            "hub relationship",
            "warn",
            f"{state}{where}: {status.get('lastError') or status.get('warning') or ''}".rstrip(
                ": "
            ),
            "`paseo hub status`; `paseo hub disconnect --force` forgets a relationship the Hub "
            "cannot be told about",
        )
    ]
