"""What only the running daemon can tell: that it answers, and which plugins failed to load;
and the address at which it serves plugins' HTTP apps (for the checks plugins contribute, such
as the MCP plugin's)."""

from __future__ import annotations

from typing import Any

from paseo.doctor.model import Check, DoctorContext


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


def tcp_address(context: DoctorContext) -> Any:
    """The daemon's first TCP listen address (plugins' HTTP apps are served on TCP only), or
    ``None``."""
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
