"""The daemon's threads share one malloc arena (glibc): a worker thread that parsed a large page
does not keep that memory in an arena of its own. Checked in a fresh interpreter against
glibc's own count of its arenas (``malloc_stats``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from paseo.daemon.arenas import chosen_by_user

GLIBC = sys.platform == "linux" and (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")

THREADS = """
import ctypes, sys, threading
from paseo.daemon.arenas import limit_to_one

print(limit_to_one())
together = threading.Barrier(4)
kept = []

def work():
    kept.append([str(n) * 3 for n in range(20_000)])
    together.wait(timeout=30)  # all four alive at once: none takes over another's arena

threads = [threading.Thread(target=work) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(timeout=30)
sys.stderr.flush()
ctypes.CDLL(None).malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


def arenas_after_threads(env: dict[str, str]) -> tuple[str, int]:
    """What ``limit_to_one`` answered, and how many arenas four threads then used."""
    done = subprocess.run(
        [sys.executable, "-c", THREADS],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    count = sum(1 for line in done.stderr.splitlines() if line.startswith("Arena "))
    return done.stdout.strip(), count


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("MALLOC_ARENA_MAX", "GLIBC_TUNABLES")}


@pytest.mark.skipif(not GLIBC, reason="glibc's arenas only")
def test_threads_share_one_arena_after_the_limit() -> None:
    assert arenas_after_threads(clean_env()) == ("True", 1)


@pytest.mark.skipif(not GLIBC, reason="glibc's arenas only")
def test_a_number_the_user_chose_is_left_alone() -> None:
    answered, count = arenas_after_threads({**clean_env(), "MALLOC_ARENA_MAX": "3"})
    assert (answered, count) == ("False", 3)


def test_the_users_choice_is_seen_in_either_variable() -> None:
    assert chosen_by_user({"MALLOC_ARENA_MAX": "2"})
    assert chosen_by_user({"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"})
    assert not chosen_by_user({"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0"})
    assert not chosen_by_user({})
