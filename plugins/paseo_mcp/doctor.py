"""``paseo doctor``'s MCP check: the endpoint reached from an agent's point of view.

An agent is given ``http://<daemon>/mcp/agents?token=…``; the check asks the same URL with no
token, which a served endpoint refuses with 401 (404: nothing is mounted there, so agents get
no Paseo MCP server). Plain ``http.client``: no proxy from the environment, no redirect.
"""

from __future__ import annotations

import http.client
from urllib.parse import urlsplit

from paseo_hookspecs.doctor import DoctorFinding, DoctorScope

from paseo_mcp.guard import MCP_PATH

NAME = "mcp endpoint"
PROBE_WAIT = 5.0


def _status(url: str) -> int:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(
        parts.hostname or "127.0.0.1", parts.port or 80, timeout=PROBE_WAIT
    )
    try:
        connection.request("GET", parts.path, headers={"Accept": "application/json"})
        return connection.getresponse().status
    finally:
        connection.close()


def check(scope: DoctorScope) -> list[DoctorFinding]:
    if not scope.daemon_running:
        return [
            DoctorFinding(
                NAME,
                "warn",
                "not checked: the daemon is not running (agents reach the MCP endpoint on its "
                "listener)",
                "`paseo daemon start`, then `paseo doctor` again",
            )
        ]
    url = scope.http_url(MCP_PATH)
    if url is None:
        return [
            DoctorFinding(
                NAME,
                "warn",
                "the daemon listens on a unix socket only: agents get no Paseo MCP server "
                "(their programs speak MCP over HTTP)",
                "listen on TCP: `paseo config set daemon.listen 127.0.0.1:6767`, then "
                "`paseo daemon restart`",
            )
        ]
    try:
        code = _status(url)
    except (OSError, http.client.HTTPException) as exc:
        return [
            DoctorFinding(
                NAME,
                "fail",
                f"{url} cannot be reached: {exc}",
                "`paseo daemon restart`; `$PASEO_HOME/daemon.log` says why the listener fails",
            )
        ]
    if code == 401:
        return [
            DoctorFinding(
                NAME, "ok", f"{url} is served (a request without an agent's token gets 401)"
            )
        ]
    if code == 404:
        return [
            DoctorFinding(
                NAME,
                "warn",
                f"{url} is not served: agents get no Paseo MCP server",
                "unset `plugins.mcp.settings.enabled: false` / PASEO_MCP=false, then "
                "`paseo daemon restart`",
            )
        ]
    return [
        DoctorFinding(
            NAME,
            "fail",
            f"{url} answered HTTP {code} to a request without a token (401 expected)",
            "check that `daemon.hostnames` allows 127.0.0.1 and no proxy sits in front; "
            "`$PASEO_HOME/daemon.log` has the details",
        )
    ]
