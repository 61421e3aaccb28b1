"""Durable records of the processes the daemon starts, and reaping what a crash left behind.

Services that start programs (the agent launcher, terminals) record each live process with
:class:`ProcessRecords` before anything talks to it and forget it once it is reaped; at the next
boot :func:`reap_orphans` kills whatever a crashed daemon left, recognising each recorded leader
by :func:`same_process` so a reused pid is never killed.
"""

from paseo.processes.identity import iso_now, process_identity, same_process
from paseo.processes.reaping import (
    REAP_TIMEOUT,
    Reaper,
    group_members,
    kill_session,
    reap_orphans,
    reap_recorded_group,
    reap_recorded_session,
    session_members,
    wait_group_gone,
)
from paseo.processes.records import ProcessRecords

__all__ = [
    "REAP_TIMEOUT",
    "ProcessRecords",
    "Reaper",
    "group_members",
    "iso_now",
    "kill_session",
    "process_identity",
    "reap_orphans",
    "reap_recorded_group",
    "reap_recorded_session",
    "same_process",
    "session_members",
    "wait_group_gone",
]
