"""A writer killed in the middle of an atomic write leaves its temporary file; the next start of
the owner of that file removes it (it may hold a secret, and they would accumulate)."""

from __future__ import annotations

import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from helpers.foreground import foreground_daemon as run_foreground
from helpers.waiting import wait_for

from paseo.agents.environments import AgentEnvironments
from paseo.fs import is_temp_file, temp_path_for
from paseo.home.paths import HomeLayout

KILL_ATTEMPTS = 30
"""Kills tried until one lands inside a write (nearly every one does)."""

_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from paseo.agents.environments import AgentEnvironments

    async def main() -> None:
        environments = AgentEnvironments(Path(sys.argv[1]))
        secret = "s" * (100 * 1024)
        for round in range(10**6):
            await environments.put("agent-1", {f"HUB_SECRET_{i}": secret for i in range(40)})
            print("ack", round, flush=True)

    asyncio.run(main())
    """
)


def _temp_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if is_temp_file(path)]


def _kill_a_writer_mid_write(directory: Path) -> Path:
    """Run a writer of per-agent variables and SIGKILL it until a kill leaves a temp file."""
    for _ in range(KILL_ATTEMPTS):
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(directory)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert child.stdout is not None
            first = child.stdout.readline()
            assert first.startswith("ack"), child.communicate(timeout=30)
            # Kill as soon as the next write's temporary file exists (it lives for the copy and
            # the fsync of megabytes; if the rename wins the race, the next attempt goes on).
            deadline = time.monotonic() + 30
            while not _temp_files(directory) and child.poll() is None:
                assert time.monotonic() < deadline, "the writer never began another write"
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(timeout=30)
        left = _temp_files(directory)
        if left:
            return left[0]
    raise AssertionError(f"none of {KILL_ATTEMPTS} kills landed inside a write")


def test_agent_environments_sweep_what_a_killed_writer_left(tmp_path: Path) -> None:
    directory = tmp_path / "agent-env"
    leftover = _kill_a_writer_mid_write(directory)
    # The half-written copy of the secrets was never readable by others.
    assert stat.S_IMODE(leftover.stat().st_mode) == 0o600
    environments = AgentEnvironments(directory)
    assert _temp_files(directory) == []
    assert sorted(p.name for p in directory.iterdir()) == ["agent-1.json"]
    del environments


def test_the_daemon_start_removes_the_temp_files_of_every_kernel_file(paseo_home: Path) -> None:
    layout = HomeLayout(paseo_home)
    layout.create_root()
    _kill_a_writer_mid_write(paseo_home / "agent-env")
    planted = [
        temp_path_for(target)
        for target in (
            layout.config,
            layout.server_id,
            layout.keypair,
            layout.pid,
            layout.local_credential,
            layout.project_icons / "prj_1.abc.png",
            paseo_home / "plugin-data" / "mcp" / "notices.json",  # the MCP plugin's
            layout.managed_processes / "rec.json",
            layout.agents / "proj" / "agent.json",
        )
    ]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{half")
    # Someone else's file in the shared home root is not the daemon's to remove.
    foreign = temp_path_for(paseo_home / "other-tool.json")
    foreign.write_text("{")
    with run_foreground(paseo_home) as daemon:
        wait_for(
            # The MCP queue and the agent folders are both cleaned after ready (the JSON
            # store reads its agent records beside the serving daemon).
            lambda: (
                daemon.poll() is not None
                or not (planted[6].exists() or planted[8].exists())
            ),
            what="the MCP notices queue to be recovered and the agent index checked",
        )
        assert daemon.poll() is None
        assert _temp_files(paseo_home) == [foreign]
