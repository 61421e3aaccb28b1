"""Bad input through the real daemon and CLI: each failure ends in a message that says what
happened and what to do, and the daemon and the other agents carry on.

One daemon hosts a healthy agent and every broken one: an unknown provider, a provider whose
program does not exist, programs that exit or hang during start-up, a model the agent
refuses, and an HTTP error from the model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from e2e.daemon.harness import (
    TURN_TIMEOUT,
    RealDaemon,
    poll,
    processes_of_agents,
    provider_settings,
)

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"
START_TIMEOUT = 10
"""``PASEO_AGENT_START_TIMEOUT`` of this daemon: how long the hanging program gets."""


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_bad_input_ends_in_clear_errors_and_the_rest_carries_on(
    daemon: RealDaemon, fake: FakeModelServer, proxy: RefusingProxy, tmp_path: Path
) -> None:
    programs = tmp_path / "programs"
    daemon.configure(
        {
            "claude": provider_settings("claude", fake, programs),
            "py-acp": provider_settings("py-acp", fake, programs),
            "ghost": {
                "extends": "claude",
                "label": "Missing program",
                "command": [str(tmp_path / "no-such-dir" / "claude")],
            },
            "quitter": {
                "extends": "acp",
                "label": "Exits at start",
                "command": _python(
                    "import sys; sys.stderr.write('quitter: no licence file found\\n'); sys.exit(3)"
                ),
            },
            "sleeper": {
                "extends": "acp",
                "label": "Hangs at start",
                "command": _python("import time; time.sleep(600)"),
            },
        }
    )
    daemon.start(PASEO_AGENT_START_TIMEOUT=str(START_TIMEOUT))
    work = tmp_path / "work"
    work.mkdir()

    def run(provider: str, prompt: str, *extra: str, detach: bool = False) -> dict[str, object]:
        args = ["run", "-o", "json", "--provider", provider, "--cwd", str(work), *extra]
        args += ["-d"] if detach else ["--wait-timeout", WAIT]
        result = daemon.cli(*args, prompt, check=False)
        assert result.returncode in (0, 5), result.stderr
        return dict(json.loads(result.stdout))

    healthy = run("py-acp", "[[reply:ready]]")
    assert (healthy["outcome"], healthy["lastMessage"]) == ("idle", "ready")
    # The hang takes START_TIMEOUT: start it first and look at it last.
    sleeper = run("sleeper", "hello", detach=True)

    # An unknown provider is refused before any agent exists.
    unknown = daemon.cli("run", "--provider", "nope", "--cwd", str(work), "hi", check=False)
    assert unknown.returncode == 1
    assert "unknown provider 'nope'" in unknown.stderr
    assert "paseo provider ls" in unknown.stderr

    failures = {
        "missing program": run("ghost", "hello"),
        "exit at start": run("quitter", "hello"),
        "refused model": run("py-acp", "hello", "--model", "no-such-model"),
        "http error": run("claude", "[[error:500:the fake model broke]]"),
    }
    for what, result in failures.items():
        assert result["outcome"] == "error", (what, result)
    # Each message says what happened and what to do.
    expected = {
        "missing program": (
            str(tmp_path / "no-such-dir" / "claude"),
            "was not found",
            "agents.providers.ghost.command",
        ),
        "exit at start": ("exited during start-up (exit code 3)", "quitter: no licence file found"),
        "refused model": ("unknown model 'no-such-model'", "offers: test-fast, test-smart"),
        "http error": ("500", "the fake model broke", "send the prompt again"),
    }
    for what, fragments in expected.items():
        message = str(failures[what]["error"])
        for fragment in fragments:
            assert fragment in message, (what, fragment, message)

    hung = daemon.cli(
        "wait", str(sleeper["id"]), "--timeout", f"{START_TIMEOUT + 30}s", check=False
    )
    assert hung.returncode == 5, hung.stderr
    assert f"did not start within {START_TIMEOUT}s" in hung.stderr
    assert "hangs during start-up" in hung.stderr
    assert "send a new prompt to retry" in hung.stderr
    broken = {str(r["agentId"]) for r in failures.values()} | {str(sleeper["id"])}
    listed = json.loads(daemon.cli("ls", "-o", "json").stdout)
    assert {a["id"]: a["lastStatus"] for a in listed if a["id"] in broken} == dict.fromkeys(
        broken, "error"
    )
    # The hanging program was killed when its start timed out; nothing else failed live.
    assert processes_of_agents(broken - {str(failures["http error"]["agentId"])}) == []

    # The daemon and the other agents carry on; a failed agent takes a new prompt.
    again = daemon.cli(
        "send", "--wait-timeout", WAIT, str(healthy["agentId"]), "[[reply:still here]]"
    )
    assert again.stdout == "still here\n"
    claude_agent = str(failures["http error"]["agentId"])
    recovered = daemon.cli("send", "--wait-timeout", WAIT, claude_agent, "[[reply:better now]]")
    assert recovered.stdout == "better now\n"
    assert daemon.stop().returncode == 0
    poll(lambda: not daemon.processes(), timeout=30, what="every process of the daemon to end")
    assert proxy.attempts == [], "something tried to leave 127.0.0.1"
