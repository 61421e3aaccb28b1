"""``server.restart``: the daemon restarted on a client's request, through ``paseo daemon restart``.

A daemon cannot start its successor in-process (the successor needs the pid file, the lock and
the listen addresses this one holds), so it runs the one restart path there is — the CLI's
``paseo daemon restart`` for its own home, with the environment it was launched with (a
``PASEO_LISTEN`` or ``PASEO_DISABLE_PLUGINS`` it was started with carries over) — in a session
of its own, so the stop that kills this daemon's process group never reaches it. Before anything
is stopped, ``config.json`` is checked the way start-up checks it: a daemon that could not come
back is not stopped (``invalid_config``), exactly as ``paseo daemon restart`` refuses.

The successor is a detached daemon, as ``paseo daemon restart`` always starts: a daemon run in
the foreground under a service manager should be restarted by that manager instead.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from typing import TYPE_CHECKING

from paseo.config import load_for_startup
from paseo.rpc.models import ShutdownParams, ShutdownResult

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

    from paseo.daemon.runtime import Daemon
    from paseo.services import ServiceRef


def _reap(process: subprocess.Popen[bytes]) -> None:
    """Wait for the restarter while this daemon lives (it outlives it: then init reaps it)."""
    threading.Thread(target=process.wait, name="paseo-restart-reaper", daemon=True).start()


def _spawn(home: str, env: dict[str, str], log_path: str) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "paseo", "--home", home, "daemon", "restart", "--quiet"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env,
            start_new_session=True,
            close_fds=True,
        )


async def restart(
    ref: ServiceRef[Daemon], ctx: RpcContext, params: ShutdownParams
) -> ShutdownResult:
    daemon = ref.get()
    layout = daemon.layout
    env = dict(os.environ)
    # Raises ConfigError (invalid_config, naming each problem): nothing is stopped.
    await asyncio.to_thread(load_for_startup, layout.config, env, home=layout.root)
    daemon.log.info(
        "restart requested over RPC by %s%s",
        ctx.client_id or "a client",
        f": {params.reason}" if params.reason else "",
    )
    process = await asyncio.to_thread(
        _spawn, os.fspath(layout.root), env, os.fspath(layout.root / "restart.log")
    )
    _reap(process)
    return ShutdownResult(accepted=True)
