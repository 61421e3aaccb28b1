"""The daemon process: owns one state root, runs services, serves clients.

:mod:`paseo.daemon.wiring` is the composition root: the one place that knows every kernel
service, its RPC adapter and the plugin method groups.
"""

from paseo.daemon.bootstrap import run_daemon
from paseo.daemon.options import DaemonOptions

__all__ = ["DaemonOptions", "run_daemon"]
