"""The whole relay path with real processes: ``paseo relay serve`` on loopback, a daemon with
the relay on, ``paseo daemon pair --json``, and ``paseo ls --host <offer URL>`` from another
home; a tampered offer fails cleanly within a bounded time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers.daemon_rpc import kill_leftover, start_daemon, stop_daemon
from helpers.relay_process import relay_serve
from nacl.public import PrivateKey
from paseo_relay.offer import Offer, encode_offer_url, parse_offer_url


def _paseo(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PASEO_HOME": str(home)}
    env.pop("PASEO_HOST", None)
    return subprocess.run(
        [sys.executable, "-m", "paseo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_pair_then_list_agents_from_another_home_through_the_relay(tmp_path: Path) -> None:
    home = tmp_path / "daemon-home"
    other = tmp_path / "client-home"
    home.mkdir()
    with relay_serve() as (endpoint, _relay):
        config = {"daemon": {"relay": {"enabled": True, "endpoint": endpoint}}}
        (home / "config.json").write_text(json.dumps(config), encoding="utf-8")
        live = start_daemon(home)
        try:
            paired = _paseo(home, "daemon", "pair", "--json")
            assert paired.returncode == 0, paired.stderr
            url = json.loads(paired.stdout)["url"]
            offer = parse_offer_url(url)
            keypair = json.loads((home / "daemon-keypair.json").read_text(encoding="utf-8"))
            assert offer.daemon_public_key_b64 == keypair["publicKeyB64"]
            assert offer.server_id == (home / "server-id").read_text(encoding="utf-8").strip()
            assert offer.endpoint == endpoint

            listed = _paseo(other, "ls", "--host", url, "-o", "json")
            assert listed.returncode == 0, listed.stderr
            assert json.loads(listed.stdout) == []
            # The client's home was not needed: nothing of the daemon's was read there.
            assert not (other / "local-credential").exists()

            wrong = Offer(
                offer.server_id,
                base64_key(PrivateKey.generate()),
                offer.endpoint,
            )
            # Bounded: the connect timeout is 15 s; the daemon's refusal comes well before.
            tampered = _paseo(other, "ls", "--host", encode_offer_url(wrong), timeout=45)
            assert tampered.returncode != 0
            # The daemon cannot open the first box and drops the tunnel (1011, then the
            # relay's 1012), as the TypeScript CLI reports it.
            assert "Failed to connect via relay offer: Server disconnected" in tampered.stderr
            assert "Traceback" not in tampered.stderr
        finally:
            stop_daemon(home)
            kill_leftover(live.pid)


def base64_key(key: PrivateKey) -> str:
    import base64

    return base64.b64encode(bytes(key.public_key)).decode("ascii")
