"""paseo.pid names two addresses once the TypeScript-protocol socket is served: this daemon's
clients (the CLI, `paseo hub`) read ``rpcListen``; markers written before it read ``listen``."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from paseo.client.discovery import discover, pid_listen


def test_rpc_listen_wins_over_the_typescript_socket() -> None:
    marker = {"listen": "/home/u/.paseo/paseo-ts.sock", "rpcListen": "127.0.0.1:6767"}
    assert pid_listen(marker) == "127.0.0.1:6767"
    assert pid_listen({"listen": "127.0.0.1:7000"}) == "127.0.0.1:7000"
    assert pid_listen({"listen": "", "rpcListen": None}) is None


def test_the_cli_connects_to_the_json_rpc_address(tmp_path: Path) -> None:
    (tmp_path / "paseo.pid").write_text(
        json.dumps({"listen": str(tmp_path / "paseo-ts.sock"), "rpcListen": "127.0.0.1:7123"})
    )
    target = discover(home=tmp_path, env={})
    assert (target.address.host, target.address.port, target.source) == (
        "127.0.0.1",
        7123,
        "paseo.pid",
    )


def test_the_marker_names_the_owner_the_typescript_cli_shows(tmp_path: Path) -> None:
    from paseo.home.meta import pid_info

    # The TypeScript CLI's `daemon status` shows "Owner <uid>@<hostname>" from paseo.pid.
    info = pid_info(home=tmp_path, version="0")
    assert info["uid"] == os.getuid()
    assert info["hostname"] == socket.gethostname()
