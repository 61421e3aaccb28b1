"""SIGKILL during ``paseo plugins update``: the active version is always whole and loadable,
and the next command leaves exactly one version behind.

Each iteration starts an update that flips the plugin between two commits and kills its process
group with SIGKILL after a random delay drawn across the length of the last uninterrupted update
(measured under the same load), so kills land in every phase: clone, placement, verification,
the config.json commit and the removal of the previous version.

``PASEO_PLUGIN_CRASH_ITERATIONS`` kills in total (default 20), split over independent batches so
pytest-xdist can run them side by side; ``PASEO_CRASH_SEED`` replays a failure.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.plugin_sources import GitPluginRepo, plugin_files

PLUGIN = "paseo-hello"
ITERATIONS = int(os.environ.get("PASEO_PLUGIN_CRASH_ITERATIONS", "20"))
BATCHES = 4


def _active(cli) -> tuple[Path, str]:
    path = Path(cli.config()["plugins"][PLUGIN]["path"])
    marker = json.loads((path / ".paseo-install.json").read_text())
    return path, marker["revision"]


def _assert_loadable(cli) -> None:
    # Strict mode is on: a missing or half-written active version fails the whole command.
    rows = [row for row in cli.json("plugins", "list") if row["name"] == PLUGIN]
    assert len(rows) == 1
    assert rows[0]["error"] is None
    assert rows[0]["hooks"] == ["paseo_register_providers"]


@pytest.mark.parametrize("batch", range(BATCHES))
def test_sigkill_during_update_never_breaks_the_active_version(
    cli, tmp_path: Path, batch: int
) -> None:
    iterations = ITERATIONS // BATCHES + (1 if batch < ITERATIONS % BATCHES else 0)
    repo = GitPluginRepo(tmp_path / "remote")
    revisions = [repo.commit(plugin_files(1), "one"), repo.commit(plugin_files(2), "two")]
    cli.json("plugins", "install", f"{repo.bare}@{revisions[0]}")

    started = time.monotonic()
    cli.json("plugins", "update", PLUGIN, "--ref", revisions[1])
    full = time.monotonic() - started

    seed = int(os.environ.get("PASEO_CRASH_SEED", str(random.SystemRandom().randrange(2**32))))
    rng = random.Random(seed)
    env = {**os.environ, **cli.env}
    finished_early = 0
    for iteration in range(iterations):
        _, current = _active(cli)
        target = revisions[1] if current == revisions[0] else revisions[0]
        child = subprocess.Popen(
            [sys.executable, "-m", "paseo", "plugins", "update", PLUGIN, "--ref", target],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        delay = rng.uniform(0, full)
        launched = time.monotonic()
        early: float | None = None
        try:
            child.wait(timeout=delay)
            finished_early += 1
            early = time.monotonic() - launched
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
        context = f"seed={seed} iteration={iteration} delay={delay:.3f}s"

        # Right after the kill: config.json names a whole version, old or new.
        path, revision = _active(cli)
        assert revision in revisions, context
        _assert_loadable(cli)

        # The next command cleans up and completes; exactly one version remains.
        other = revisions[1] if revision == revisions[0] else revisions[0]
        started = time.monotonic()
        cli.json("plugins", "update", PLUGIN, "--ref", other)
        full = time.monotonic() - started
        if early is not None:
            # The machine got faster than the last measurement: draw the next kill within
            # what an update takes now, so kills keep landing mid-update.
            full = min(full, early)
        path, revision = _active(cli)
        assert revision == other, context
        assert cli.versions(PLUGIN) == [path], context
        leftovers = sorted(p.name for p in (cli.home / "plugins").iterdir())
        assert leftovers == [".lock", PLUGIN, "sources.json"], context
        assert cli.sources() == {PLUGIN: {"kind": "git", "remote": repo.bare.as_uri()}}, context

    _assert_loadable(cli)
    # Kills must land mid-update or the test proves nothing.
    assert finished_early < iterations, f"seed={seed}: every update finished before its kill"
