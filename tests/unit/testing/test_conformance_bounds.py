"""The conformance suites' own bounds fit inside the suite's per-test alarm.

pytest-timeout's alarm (``timeout`` in pyproject.toml) covers a test's whole protocol, report
included; when it fires while pytest writes the report, pytest-xdist ends the whole run with an
internal error instead of one failed test. So every scenario must give up on its own first, with
a message naming what hung: its body, then closing its sessions, then a margin for set-up and
the report.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from paseo.testing.provider_conformance import ProviderConformance
from paseo.testing.store_conformance.base import StoreSuite

REPO = Path(__file__).resolve().parents[3]
MARGIN = 30.0
"""Seconds left for fixtures, the fake model server, the proxy and the report."""


def _alarm() -> float:
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    return float(options["timeout"])


def _suites() -> list[type]:
    """Every conformance subclass the suite runs (their modules imported under private names)."""
    found: list[type] = []
    paths = [
        path
        for folder in ("unit", "integration", "e2e")  # not tests/agents: node_modules
        for path in (REPO / "tests" / folder).rglob("test_*conformance*.py")
        if path != Path(__file__).resolve()
    ]
    for path in sorted(paths):
        name = f"_bounds_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, ProviderConformance | StoreSuite)
            and value.__module__ == name
        ]
    return found


def test_the_suites_are_found() -> None:
    names = {suite.__name__ for suite in _suites()}
    assert {"TestOmp", "TestClaudeConformance", "TestCodexConformance"} <= names, names
    assert any(issubclass(suite, StoreSuite) for suite in _suites())


@pytest.mark.parametrize("suite", _suites(), ids=lambda suite: suite.__name__)
def test_a_scenario_gives_up_before_the_alarm(suite: type) -> None:
    close = getattr(suite, "close_timeout", 0.0)
    assert suite.test_timeout + close + MARGIN <= _alarm(), (
        f"{suite.__name__}: {suite.test_timeout} s of scenario + {close} s of closing + "
        f"{MARGIN} s of margin reach the {_alarm()} s alarm"
    )


def test_one_start_and_one_turn_fit_in_a_scenario() -> None:
    # The concurrency scenario starts sessions at once, then runs their turns at once: at
    # worst one start bound then one turn bound, which the scenario's bound must allow.
    bounds = ProviderConformance
    assert bounds.start_timeout + bounds.turn_timeout <= bounds.test_timeout
