"""Runs every group of checks against one home, the daemon asked once up front.

A group that raises does not stop the others: its failure becomes a ``fail`` check naming the
error, so the report is always complete and no traceback reaches the terminal.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from paseo.doctor.model import Check, DoctorContext
from paseo.home import HomeLayout

log = logging.getLogger("paseo.doctor")

GROUPS: tuple[tuple[str, str], ...] = (
    # (group name, module under paseo.doctor), in report order.
    ("daemon", "served:daemon_checks"),
    ("config", "configfile:checks"),
    ("home", "home:checks"),
    ("listen", "listen:checks"),
    ("store", "store:checks"),
    ("git", "tools:checks"),
    ("providers", "providers:checks"),
    ("plugins", "plugins:checks"),
    ("speech", "speech:checks"),
)

STATUS_WAIT = 3.0
"""Seconds to wait for the daemon's status answer (``paseo daemon status`` waits as long)."""


def make_context(layout: HomeLayout, env: Mapping[str, str]) -> DoctorContext:
    """The context, with the daemon's status when it runs and answers."""
    from paseo.client.discovery import daemon_running, discover, pid_info, pid_listen
    from paseo.client.quick import get_json

    context = DoctorContext(layout=layout, env=dict(env))
    try:
        context.running = daemon_running(layout.root)
    except OSError as exc:
        context.daemon_note = f"cannot read {layout.lock}: {exc.strerror or exc}"
        return context
    if not context.running:
        return context
    context.pid_info = pid_info(layout.root)
    context.rpc_listen = pid_listen(context.pid_info)
    try:
        # Never --host / PASEO_HOST: the doctor examines this home's own daemon.
        target = discover(None, home=layout.root, env={})
        code, body = get_json(
            target.address, "/api/status", token=target.token, timeout=STATUS_WAIT
        )
    except (OSError, ValueError) as exc:
        context.daemon_note = f"the daemon does not answer: {exc}"
        return context
    if code == 200 and isinstance(body, dict):
        context.status = body
    else:
        refused = code in (401, 403)
        context.daemon_note = (
            "it refused this home's local credential" if refused else f"status answered HTTP {code}"
        )
    return context


def run_checks(
    layout: HomeLayout,
    env: Mapping[str, str],
    *,
    groups: tuple[tuple[str, str], ...] = GROUPS,
) -> list[Check]:
    """Every check of every group, in report order."""
    context = make_context(layout, env)
    results: list[Check] = []
    for group, target in groups:
        module_name, _, function = target.partition(":")
        try:
            module = importlib.import_module(f"paseo.doctor.{module_name}")
            check: Callable[[DoctorContext], list[Check]] = getattr(module, function)
            results.extend(check(context))
        except Exception as exc:  # one broken group must not hide the others' findings
            log.debug("doctor group %s failed", group, exc_info=True)
            results.append(
                Check(
                    group,
                    group,
                    "fail",
                    f"the check itself failed: {type(exc).__name__}: {exc}",
                    "report this as a bug in `paseo doctor`, with this message",
                )
            )
    return results


def summary(checks: list[Check]) -> dict[str, Any]:
    """Counts by status."""
    counts = {"ok": 0, "warn": 0, "fail": 0}
    for check in checks:
        counts[check.status] += 1
    return counts
