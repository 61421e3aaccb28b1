"""``paseo attach`` and ``paseo logs -f`` survive a daemon restart: they say on stderr that
they are reconnecting, get their daemon back (with its new local credential) and go on after
the last entry they showed — the turn sent after the restart is shown, nothing twice."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, provider_settings

from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"


class Lines:
    """A stream read by a thread, line by line, so every wait for it is bounded."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(line)

    def until(self, wanted: str, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        while not any(wanted in line for line in self.seen):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line with {wanted!r} in {timeout:.0f}s: {self.seen}")
            try:
                self.seen.append(self.lines.get(timeout=left))
            except queue.Empty:
                continue
        return self.seen


def _replies(lines: list[str]) -> list[tuple[int, str]]:
    entries: list[dict[str, Any]] = [json.loads(line) for line in lines if line.startswith("{")]
    return [(int(e["seq"]), json.dumps(e["event"])) for e in entries]


@pytest.mark.parametrize("command", [["logs", "-f", "--tail", "50"], ["attach", "--tail", "50"]])
def test_a_follower_reconnects_after_a_daemon_restart(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path, workdir: Path, command: list[str]
) -> None:
    daemon.configure({"py-acp": provider_settings("py-acp", fake, tmp_path / "programs")})
    daemon.start()
    agent = daemon.cli(
        "run", "-q", "--provider", "py-acp", "--cwd", str(workdir), "before [[reply:one]]"
    ).stdout.strip()
    follower = subprocess.Popen(
        [sys.executable, "-m", "paseo", command[0], agent, *command[1:], "-o", "json"],
        env={**os.environ, "PASEO_HOME": str(daemon.home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert follower.stdout is not None
        assert follower.stderr is not None
        out, err = Lines(follower.stdout), Lines(follower.stderr)
        out.until('"one"', 30)
        daemon.stop()
        err.until("reconnecting", 30)
        daemon.start()
        err.until("reconnected", 60)
        daemon.cli("send", agent, "--wait-timeout", WAIT, "after [[reply:two]]")
        seen = out.until('"two"', 30)
        assert follower.poll() is None, "the follower ended"
        seqs = [seq for seq, _ in _replies(seen)]
        assert seqs == sorted(set(seqs)), "an entry was shown twice or out of order"
    finally:
        follower.terminate()
        follower.wait(timeout=10)
