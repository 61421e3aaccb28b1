"""The scripts tests' git environment (a temporary identity, no system config) reused."""

from integration.scripts.conftest import git_env

__all__ = ["git_env"]
