"""One malloc arena for the daemon's threads (glibc only).

glibc gives each new thread that allocates an arena of its own (up to eight per core), and
what is freed into an arena is reused by that arena's threads only and seldom returned to the
system: what each arena grew to mostly stays in the daemon's RSS. The daemon's worker
threads (``asyncio.to_thread``: the JSON driver's timeline reads past its cache, the SQLite
driver's readers and writer) parse pages of entries that can be megabytes each, so a thread
that once read a large page went on holding about that much. Under the GIL the extra arenas buy
almost nothing (one thread runs Python at a time; small blocks come from per-thread caches).

Measured with ``tests/e2e/tswire/test_slow_client.py`` (a client that stops reading opens an
agent whose timeline is 64 MiB of large messages), whose measure is the stall's RSS growth less
a baseline flood's, bounded at 32 MiB: -2 to 33 MiB with glibc's default arenas (it failed under
load), -26 to -18 with two, -40 and -36 with one; the Python objects the stall held
(``tracemalloc``) went back to within 1.4 MiB of where they were.
"""

from __future__ import annotations

import os

M_ARENA_MAX = -8
"""``mallopt``'s parameter for the number of arenas (glibc's ``malloc.h``)."""


def chosen_by_user(env: dict[str, str] | os._Environ[str]) -> bool:
    """Whether the environment already says how many arenas (glibc reads it at start-up)."""
    return "MALLOC_ARENA_MAX" in env or "arena_max" in env.get("GLIBC_TUNABLES", "")


def limit_to_one() -> bool:
    """Make every thread created from now on share the main arena; False where the C library
    is not glibc or the user chose a number. Call it before the daemon starts a thread."""
    if chosen_by_user(os.environ):
        return False
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return False
    except (ValueError, OSError):  # not glibc (no such confstr name) or not POSIX
        return False
    # ctypes only here: about 0.4 MiB and a few ms the daemon pays once, at start-up.
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, 1))
