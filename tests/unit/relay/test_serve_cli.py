"""``paseo relay serve`` as users run it: a child process that serves until SIGTERM."""

from __future__ import annotations

import json
import signal
import urllib.request

from helpers.relay_process import relay_serve


def test_relay_serve_answers_health_and_stops_on_sigterm() -> None:
    with relay_serve() as (endpoint, process):
        with urllib.request.urlopen(f"http://{endpoint}/health", timeout=10) as response:
            assert json.loads(response.read()) == {"status": "ok"}
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert process.stderr is not None
        assert "Traceback" not in process.stderr.read()


def test_a_bad_listen_address_is_an_error_without_traceback(run_paseo) -> None:
    result = run_paseo("relay", "serve", "--listen", "not-an-address")
    assert result.returncode == 2
    assert "--listen" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_port_in_use_is_an_error_without_traceback(run_paseo) -> None:
    with relay_serve() as (endpoint, _):
        result = run_paseo("relay", "serve", "--listen", endpoint)
    assert result.returncode == 1
    assert f"cannot listen on {endpoint}" in result.stderr
    assert "Traceback" not in result.stderr
