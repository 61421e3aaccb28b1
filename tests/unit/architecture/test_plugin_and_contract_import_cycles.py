"""Every built-in plugin package, the contract (``hookspecs/paseo_hookspecs``) and each example
plugin import their own modules without cycles. Every import counts: inside functions (the way
a cycle is usually hidden), under ``TYPE_CHECKING``, relative ones resolved. The contract, like
the plugins, never imports the kernel."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.import_graph import REPO, cycles, imports_of, module_graph, python_files

CONTRACT = REPO / "hookspecs" / "paseo_hookspecs"


def _packages() -> list[Path]:
    plugins = [p for p in sorted((REPO / "plugins").iterdir()) if (p / "__init__.py").is_file()]
    examples = [
        p
        for example in sorted((REPO / "examples").iterdir())
        for p in sorted(example.iterdir())
        if (p / "__init__.py").is_file()
    ]
    return [*plugins, CONTRACT, *examples]


PACKAGES = _packages()


def test_every_built_in_plugin_and_the_contract_are_checked() -> None:
    names = {p.name for p in PACKAGES}
    assert {"paseo_hookspecs", "paseo_claude", "paseo_hub", "paseo_mcp"} <= names


def test_an_import_inside_a_function_closes_a_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import helper\n")
    (package / "b.py").write_text("def helper():\n    from pkg import a\n    return a\n")
    (package / "c.py").write_text("from . import b\n")
    assert cycles(module_graph(package)) == [["pkg.a", "pkg.b", "pkg.a"]]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_import_cycle_among_the_package_modules(package: Path) -> None:
    found = cycles(module_graph(package))
    assert not found, f"import cycles in {package.relative_to(REPO)}:\n" + "\n".join(
        " -> ".join(cycle) for cycle in found
    )


def test_the_contract_never_imports_the_kernel() -> None:
    offenders = [
        f"{path.relative_to(REPO)}:{found.line}: {found.module}"
        for path in python_files(CONTRACT)
        for found in imports_of(CONTRACT.parent, path)
        if found.module == "paseo" or found.module.startswith("paseo.")
    ]
    assert not offenders, "the contract must not import the kernel:\n" + "\n".join(offenders)
