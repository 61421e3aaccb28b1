"""The built-in providers are written against the plugin contract alone: no module of theirs
imports ``paseo`` (anywhere, including inside functions and under ``TYPE_CHECKING``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[3] / "plugins"
PROVIDERS = ("paseo_claude", "paseo_codex", "paseo_acp")


def _kernel_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] == "paseo"]
    return found


@pytest.mark.parametrize("package", PROVIDERS)
def test_a_provider_imports_nothing_from_the_kernel(package: str) -> None:
    modules = sorted((PLUGINS / package).rglob("*.py"))
    assert modules, f"no modules under plugins/{package}"
    offending = [hit for module in modules for hit in _kernel_imports(module)]
    assert offending == []
