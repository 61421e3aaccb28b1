"""The daemon's reverse proxy: ``<script>.<branch>.<project>.localhost:<daemon port>`` reaches a
running service over HTTP and a WebSocket upgrade; unknown names get 404, stopped ones 503."""

from __future__ import annotations

import asyncio
import http.client
import json
from pathlib import Path
from typing import Any

from helpers.daemon_rpc import LiveDaemon
from integration.scripts.test_scripts_cli import make_worktree, scripts, wait_for
from websockets.asyncio.client import connect


def through_daemon(daemon: LiveDaemon, host: str, path: str = "/ping") -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": f"{host}:{daemon.port}"})
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


async def ws_echo(daemon: LiveDaemon, host: str) -> str:
    uri = f"ws://{host}:{daemon.port}/"
    async with connect(uri, host="127.0.0.1", port=daemon.port, open_timeout=10) as ws:
        await ws.send("hi")
        reply = await asyncio.wait_for(ws.recv(), 10)
        return str(reply)


def test_services_answer_through_the_daemons_port_by_name(
    daemon: LiveDaemon, repo: Path, run_paseo: Any
) -> None:
    cwd = make_worktree(run_paseo, repo)["cwd"]
    for name in ("web-app", "echo_ws", "api"):
        run_paseo("script", "start", name, "--cwd", cwd, check=True)

    def running() -> dict[str, dict[str, Any]] | None:
        listed = scripts(run_paseo, cwd)
        names = ("web-app", "echo_ws", "api")
        return listed if all(listed[n]["status"] == "running" for n in names) else None

    listed = wait_for(running, 30, "the services to run")
    web_host = listed["web-app"]["proxyHost"]
    assert web_host == "web-app.feat-x.repo.localhost"
    assert through_daemon(daemon, web_host, "/a/b?c=1") == (200, "web /a/b?c=1")
    assert through_daemon(daemon, web_host.upper()) == (200, "web /ping")

    ws_host = listed["echo_ws"]["proxyHost"]
    assert ws_host == "echo-ws.feat-x.repo.localhost"
    assert asyncio.run(ws_echo(daemon, ws_host)) == "echo:hi"
    assert through_daemon(daemon, ws_host) == (200, "ws-http")

    status, body = through_daemon(daemon, "nothing.feat-x.repo.localhost")
    assert status == 404
    assert body.strip() == "Not Found"

    run_paseo("script", "stop", "api", "--cwd", cwd, check=True)
    status, _ = through_daemon(daemon, listed["api"]["proxyHost"])
    assert status == 503

    # The daemon's own routes are untouched by the proxy.
    status, body = through_daemon(daemon, "127.0.0.1", "/api/health")
    assert status == 200
    assert json.loads(body)["ok"] is True


def test_the_default_branch_drops_its_label(daemon: LiveDaemon, repo: Path, run_paseo: Any) -> None:
    run_paseo("project", "add", str(repo), check=True)
    run_paseo("script", "start", "web-app", "--cwd", str(repo), check=True)
    web = wait_for(
        lambda: (s := scripts(run_paseo, str(repo))["web-app"])["status"] == "running" and s,
        30,
        "web-app to run",
    )
    assert web["proxyHost"] == "web-app.repo.localhost"
    assert through_daemon(daemon, "web-app.repo.localhost") == (200, "web /ping")
    run_paseo("script", "stop", "web-app", "--cwd", str(repo), check=True)
