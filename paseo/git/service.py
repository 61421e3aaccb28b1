"""The ``git`` kernel service: the daemon's one Git process limiter and runner.

Other services find it with :func:`git_service` (it starts first, see
:data:`paseo.daemon.services.SERVICE_FACTORIES`). Limits are re-read from the resolved config
(``daemon.git``; environment overrides already applied) before every process, so ``paseo
reload`` changes them live.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo.git.limiter import GitLimits, GitProcessLimiter
from paseo.git.runner import GitRunner

if TYPE_CHECKING:
    from paseo_hookspecs.registration import RpcMethodGroup

    from paseo.daemon.runtime import Daemon


class GitService:
    """Holds :attr:`limiter` and :attr:`runner`; has no RPC methods and no background work."""

    name = "git"

    def __init__(self, daemon: Daemon) -> None:
        def limits() -> GitLimits:
            git = daemon.config.resolved.daemon.git
            return GitLimits(git.maxProcessesPerSecond, git.maxProcessConcurrency)

        self.limiter = GitProcessLimiter(limits)
        self.runner = GitRunner(self.limiter)

    def rpc_groups(self) -> list[RpcMethodGroup]:
        return []

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None


def create(daemon: Daemon) -> GitService:
    """Service factory (see :mod:`paseo.daemon.services`)."""
    return GitService(daemon)


def git_service(daemon: Daemon) -> GitService:
    """The running daemon's :class:`GitService`."""
    for service in daemon.services:
        if isinstance(service, GitService):
            return service
    raise RuntimeError("the git service is not running")
