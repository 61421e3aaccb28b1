"""The ``git`` kernel service: the daemon's one Git process limiter and runner.

The composition root builds it first and hands :attr:`GitService.runner` to the services that
run Git. Limits are re-read from the resolved config (``daemon.git``; environment overrides
already applied) before every process, so ``paseo reload`` changes them live.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from paseo.git.limiter import GitLimits, GitProcessLimiter
from paseo.git.runner import GitRunner

if TYPE_CHECKING:
    from paseo.git.github import GitHub
    from paseo.services import ConfigView


class GitService:
    """Holds :attr:`limiter`, :attr:`runner` and :attr:`github`; has no background work."""

    name = "git"

    def __init__(self, config: ConfigView) -> None:
        def limits() -> GitLimits:
            git = config.resolved.daemon.git
            return GitLimits(git.maxProcessesPerSecond, git.maxProcessConcurrency)

        self.limiter = GitProcessLimiter(limits)
        self.runner = GitRunner(self.limiter)

    @functools.cached_property
    def github(self) -> GitHub:
        """``gh``, behind the same limiter (it starts git processes of its own); imported on
        first use: a start that opens no pull request need not load it."""
        from paseo.git.github import GitHub

        return GitHub(self.limiter)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None
