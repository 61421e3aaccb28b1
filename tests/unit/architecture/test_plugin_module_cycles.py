"""No plugin's modules, and no module of the contract, import each other in a cycle (every
import counts, inside functions and under ``TYPE_CHECKING``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.import_graph import REPO, cycles, module_graph

PACKAGES = sorted(p for p in (REPO / "plugins").iterdir() if (p / "__init__.py").exists())


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_plugin_has_no_import_cycle(package: Path) -> None:
    found = cycles(module_graph(package))
    assert not found, f"import cycles in {package}:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_contract_has_no_import_cycle() -> None:
    found = cycles(module_graph(REPO / "hookspecs" / "paseo_hookspecs"))
    assert not found, "import cycles in the contract:\n" + "\n".join(" -> ".join(c) for c in found)
