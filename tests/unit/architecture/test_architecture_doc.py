"""docs/architecture.md stays true: its tables name every kernel package (``paseo/<name>``) and
every built-in plugin (``plugins/<name>``), and nothing that no longer exists.

A room is named in the first column of a table row, in backticks: ``paseo/config``, or a bare
name continuing a row that started with a ``paseo/`` room (`` `paseo/config`, `home` ``).
"""

from __future__ import annotations

import re

from helpers.import_graph import REPO

DOC = REPO / "docs" / "architecture.md"


def _packages(directory: str) -> set[str]:
    return {
        f"{directory}/{path.name}"
        for path in (REPO / directory).iterdir()
        if (path / "__init__.py").is_file()
    }


def _rooms() -> set[str]:
    """Every room the doc's tables name in their first column."""
    named: set[str] = set()
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        prefix = ""
        for name in re.findall(r"`([^`]+)`", first):
            if "/" in name:
                prefix = name.rpartition("/")[0] + "/"
                named.add(name)
            else:
                named.add(prefix + name)
    return named


def test_the_reader_understands_grouped_rows() -> None:
    rooms = _rooms()
    assert {"paseo/config", "paseo/home", "hookspecs/paseo_hookspecs"} <= rooms


def test_every_kernel_package_and_plugin_is_named() -> None:
    missing = sorted((_packages("paseo") | _packages("plugins")) - _rooms())
    assert not missing, f"docs/architecture.md names no room for: {', '.join(missing)}"


def test_every_named_room_exists() -> None:
    stale = sorted(room for room in _rooms() if not (REPO / room / "__init__.py").is_file())
    assert not stale, f"docs/architecture.md names rooms that do not exist: {', '.join(stale)}"
