"""A daemon holding more agents than one ``agent.list`` page: ``paseo ls`` shows the most
recent first, a default limit with a line saying how to see the rest, and streams every format
page by page into one valid answer; a low open-file limit loses none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from helpers.daemon_rpc import LiveDaemon, stop_daemon
from paseo_hookspecs.records import agent_record_path

from paseo.cli.commands.ls import DEFAULT_LIMIT, PAGE
from paseo.testing.store_conformance import agent_data, iso

Run = Callable[..., subprocess.CompletedProcess[str]]
AGENTS = PAGE * 2 + 50


def _seed(home: Path) -> list[str]:
    """Closed agents on disk as a stopped daemon leaves them; ids newest first."""
    ids = []
    for n in range(AGENTS):
        record = agent_data(
            f"00000000-0000-4000-8000-{n:012x}",
            cwd=f"/tmp/repo-{n % 7}",
            created_at=iso(n),
            lastStatus="closed",
            archivedAt=iso(AGENTS) if n % 10 == 0 else None,
        )
        path = home / agent_record_path(record["id"], record["cwd"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record))
        ids.append(record["id"])
    return ids[::-1]


def test_ls_pages_newest_first_with_a_default_limit_and_streams_every_format(
    agent_daemon_factory: Callable[..., LiveDaemon], paseo_home: Path, run_paseo: Run
) -> None:
    newest = _seed(paseo_home)
    unarchived = [i for i in newest if int(i[-12:], 16) % 10]
    agent_daemon_factory()

    def paseo(*args: str) -> subprocess.CompletedProcess[str]:
        return run_paseo(*args, env={"PASEO_HOME": str(paseo_home)}, check=True)

    default = paseo("ls", "-q")
    assert default.stdout.split() == unarchived[:DEFAULT_LIMIT]
    assert f"{len(unarchived) - DEFAULT_LIMIT} more agents not shown" in default.stderr
    assert "--all" in default.stderr
    assert "--limit" in default.stderr
    table = paseo("ls", "--limit", "3").stdout.splitlines()
    assert table[0].split()[0] == "ID"
    assert [line.split()[0] for line in table[1:]] == [i[:8] for i in unarchived[:3]]

    everything = paseo("ls", "-a", "-o", "json")
    assert [a["id"] for a in json.loads(everything.stdout)] == newest
    assert everything.stderr == ""
    lines = paseo("ls", "--limit", "0", "--jsonl").stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == unarchived
    as_yaml = paseo("ls", "-a", "-o", "yaml").stdout
    listed: list[dict[str, Any]] = yaml.load(as_yaml, Loader=yaml.CSafeLoader)
    assert [a["id"] for a in listed] == newest
    table_rows = paseo("ls", "-a", "--no-headers").stdout.splitlines()
    assert len(table_rows) == AGENTS
    assert json.loads(paseo("ls", "--label", "no=such", "-o", "json").stdout) == []
    bad = run_paseo("ls", "--limit", "-1", env={"PASEO_HOME": str(paseo_home)})
    assert bad.returncode == 2
    assert "--limit takes a count" in bad.stderr


def test_a_low_open_file_limit_loses_no_agent(paseo_home: Path, run_paseo: Run) -> None:
    # More agent files than the daemon may hold open at once: the cold load reads them in
    # bounded batches, so every one is loaded (TypeScript Paseo drops those it cannot open).
    newest = _seed(paseo_home)
    env = {"PASEO_HOME": str(paseo_home)}
    started = subprocess.run(
        ["sh", "-c", f'ulimit -n 128 && exec "{sys.executable}" -m paseo daemon start -q'],
        env={**os.environ, **env, "PASEO_LISTEN": "127.0.0.1:0"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert started.returncode == 0, started.stderr
    try:
        listed = run_paseo("ls", "-a", "-q", env=env, check=True).stdout.split()
        assert listed == newest
    finally:
        stop_daemon(paseo_home)
