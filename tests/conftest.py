"""Fixtures shared by every test: a private state root and a runner for the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

PYCACHE = REPO / ".cache" / "pycache"
"""The suite's private bytecode cache (``sys.pycache_prefix``), outside the source tree."""


def _share_bytecode() -> None:
    """Let this process, the xdist workers and every ``python -m paseo`` the tests start reuse
    compiled bytecode.

    A machine (or CI) with ``PYTHONDONTWRITEBYTECODE=1`` otherwise recompiles the ~400 kernel and
    plugin modules in every daemon and CLI subprocess (about half a second of CPU each, thousands
    of times a run) and re-rewrites every test module in every worker. The cache goes under
    ``.cache/pycache`` rather than into ``__pycache__`` beside the sources, so the tree stays as
    clean as that setting kept it; an explicit ``PYTHONPYCACHEPREFIX`` is respected. Runs at
    import, before pytest starts the workers, so they and every subprocess inherit it.
    """
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(PYCACHE)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_share_bytecode()


@pytest.fixture(autouse=True)
def _hermetic_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test gets its own HOME and PASEO_HOME, strict plugin loading, no inherited
    PASEO_* settings from the developer's shell."""
    for name in list(os.environ):
        if name.startswith("PASEO_"):
            monkeypatch.delenv(name)
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PASEO_HOME", str(tmp_path / "paseo-home"))
    monkeypatch.setenv("PASEO_STRICT_PLUGINS", "1")
    # Never the default port: tests run in parallel and the machine may run a real daemon.
    monkeypatch.setenv("PASEO_LISTEN", "127.0.0.1:0")
    return


@pytest.fixture
def paseo_home(tmp_path: Path) -> Path:
    """The test's ``$PASEO_HOME`` (not created)."""
    return tmp_path / "paseo-home"


RunPaseo = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_paseo() -> RunPaseo:
    """Run the real ``paseo`` command (``python -m paseo``) with a bounded timeout."""

    def run(
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = 60,
        check: bool = False,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        full_env = dict(os.environ)
        if env:
            full_env.update(env)
        result = subprocess.run(
            [sys.executable, "-m", "paseo", *args],
            env=full_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            check=False,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"paseo {' '.join(args)} exited {result.returncode}\n"
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
            )
        return result

    return run
