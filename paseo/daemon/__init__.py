"""The daemon process: owns one state root, runs services, serves clients."""

from paseo.daemon.bootstrap import DaemonOptions, run_daemon

__all__ = ["DaemonOptions", "run_daemon"]
