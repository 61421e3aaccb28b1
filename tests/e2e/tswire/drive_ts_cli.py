"""Drive the real TypeScript ``paseo`` CLI against this daemon (a development check, not part
of the suite: it needs a local build of the TypeScript CLI, see docs/ts-clients.md).

Usage: ``TS_PASEO_CLI=/path/to/the/cli.mjs .venv/bin/python
tests/e2e/tswire/drive_ts_cli.py`` (from the repository root). Starts a daemon with Claude
Code behind the fake model server, then runs the TypeScript CLI with no flags in the same home
(it finds the socket through ``paseo.pid``); exits non-zero on the first command that fails.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from e2e.daemon.harness import provider_settings
from e2e.tswire.conftest import TsDaemon

from paseo.testing.fake_model import FakeModelServer, RefusingProxy

STEPS: list[tuple[list[str], str | None]] = [
    (["daemon", "status"], "paseo-ts.sock"),
    (["provider", "ls"], "claude"),
    (
        ["run", "--provider", "claude", "--title", "tsrun", "--mode", "default", "[[reply:hi]]"],
        "tsrun",
    ),
    (["ls"], "tsrun"),
    (["inspect", "tsrun"], "AvailableModes"),
    (["logs", "tsrun"], "hi"),
    (["send", "tsrun", "[[reply:second]]"], "completed"),
    (["agent", "mode", "tsrun", "--list"], "acceptEdits"),
    (["agent", "update", "tsrun", "--name", "renamed"], "renamed"),
    (["send", "--no-wait", "renamed", "[[write:f.txt:x]]"], "sent"),
    (["wait", "renamed", "--timeout", "60s"], "permission"),
    (["permit", "ls"], "Write"),
    (["permit", "allow", "renamed"], "allowed"),
    (["wait", "renamed", "--timeout", "60s"], "idle"),
    (["stop", "renamed"], None),
    (["worktree", "ls"], None),
    (["terminal", "ls"], None),
    (["schedule", "ls"], None),
    (["chat", "create", "room", "--purpose", "checks"], "room"),
    (["chat", "post", "room", "hello @renamed"], "hello"),
    (["chat", "read", "room"], "hello"),
    (["chat", "wait", "room", "--timeout", "2s"], None),
    (["chat", "ls"], "room"),
    (["chat", "inspect", "room"], "checks"),
    (["chat", "delete", "room"], "room"),
    (
        [
            *("loop", "run", "--provider", "claude", "--name", "lp"),
            *("--verify-check", "true", "--max-iterations", "1", "[[reply:looped]]"),
        ],
        "lp",
    ),
    (["loop", "ls"], "lp"),
    (["loop", "inspect", "lp"], "Iterations"),
    (["loop", "logs", "lp"], "Loop created"),
    (["loop", "stop", "lp"], "ITER"),
    (["archive", "renamed"], "archived"),
    (["delete", "renamed"], None),
]


def main() -> int:
    cli = os.environ.get("TS_PASEO_CLI")
    if not cli:
        print("set TS_PASEO_CLI to the TypeScript CLI's bin/paseo", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="ts-cli-"))
    work = root / "work"
    work.mkdir()
    with FakeModelServer() as fake, RefusingProxy() as proxy:
        daemon = TsDaemon(root / "d", proxy)
        daemon.write_config({"claude": provider_settings("claude", fake, root / "programs")})
        # The TypeScript CLI refuses a config.json with keys it does not know (`plugins`).
        config = json.loads((daemon.home / "config.json").read_text())
        config.pop("plugins")
        (daemon.home / "config.json").write_text(json.dumps(config))
        daemon.start()
        env = {**os.environ, "PASEO_HOME": str(daemon.home), "HOME": str(root / "ts-home")}
        try:
            for args, expected in STEPS:
                result = subprocess.run(
                    ["node", cli, *args],
                    env=env,
                    cwd=work,
                    capture_output=True,
                    text=True,
                    timeout=120,
                    check=False,
                )
                ok = result.returncode == 0 and (expected is None or expected in result.stdout)
                print(f"{'ok ' if ok else 'FAIL'} paseo {' '.join(args)}")
                if not ok:
                    print(result.stdout, result.stderr, sep="\n")
                    return 1
            # Two invocations at once share the CLI's clientId (`chat wait` beside `chat post`).
            run = functools.partial(subprocess.run, env=env, cwd=work, capture_output=True)
            run(["node", cli, "chat", "create", "both"], timeout=60, check=True)
            waiting = subprocess.Popen(
                ["node", cli, "chat", "wait", "both", "--timeout", "60s"],
                env=env,
                cwd=work,
                stdout=subprocess.PIPE,
                text=True,
            )
            time.sleep(3)  # let the wait connect first (a development check, not a test)
            posted = run(["node", cli, "chat", "post", "both", "at once"], timeout=60)
            heard, _ = waiting.communicate(timeout=90)
            ok = posted.returncode == 0 and waiting.returncode == 0 and "at once" in heard
            print(f"{'ok ' if ok else 'FAIL'} paseo chat wait beside paseo chat post")
            if not ok:
                return 1
        finally:
            daemon.cleanup()
        assert proxy.attempts == []
    return 0


if __name__ == "__main__":
    sys.exit(main())
