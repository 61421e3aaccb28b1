"""``docs/architecture.md`` names every kernel package and every built-in plugin: a package or
a plugin added without a word about where it belongs fails here."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.import_graph import REPO

DOC = REPO / "docs" / "architecture.md"


def _packages(root: Path) -> list[str]:
    return sorted(init.parent.name for init in root.glob("*/__init__.py"))


def _names_package(text: str, package: str) -> bool:
    """The page names ``paseo/<package>`` in one of the forms it uses: a path, a dotted module,
    a quoted name in a room's row, or ``<package>/`` in the drawing."""
    forms = (f"paseo/{package}", f"paseo.{package}", f"`{package}`", f" {package}/")
    return any(form in text for form in forms)


@pytest.mark.parametrize("package", _packages(REPO / "paseo"))
def test_every_kernel_package_is_named(package: str) -> None:
    assert _names_package(DOC.read_text(encoding="utf-8"), package), (
        f"docs/architecture.md does not name the kernel package paseo/{package}"
    )


@pytest.mark.parametrize("plugin", _packages(REPO / "plugins"))
def test_every_built_in_plugin_is_named(plugin: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    assert any(plugin + end in text for end in (" ", "`", "\n", ",", ".", ")")), (
        f"docs/architecture.md does not name the plugin {plugin}"
    )


def test_the_check_refuses_an_unnamed_package() -> None:
    assert not _names_package("agents/ workspaces/", "work")
    assert _names_package("the rooms: `paseo/agents`", "agents")
