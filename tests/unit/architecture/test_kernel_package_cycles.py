"""The kernel's packages import each other without cycles (every import counts, inside
functions and under ``TYPE_CHECKING``), and placement has one owner: ``paseo.workspaces``
composes the project registry and the worktree service, which never import it."""

from __future__ import annotations

from helpers.import_graph import REPO, cycles, module_graph


def _packages() -> dict[str, set[str]]:
    """The import graph between ``paseo.<package>`` (a top-level module counts as one)."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for module, targets in module_graph(REPO / "paseo").items():
        edges = graph.setdefault(package(module), set())
        edges.update(package(t) for t in targets if package(t) != package(module))
    return graph


def test_the_kernels_packages_have_no_import_cycle() -> None:
    found = cycles(_packages())
    assert not found, "package cycles in paseo/:\n" + "\n".join(" -> ".join(c) for c in found)


def test_placement_is_owned_by_the_workspaces_package() -> None:
    graph = _packages()
    assert "paseo.workspaces" not in graph["paseo.projects"]
    assert "paseo.worktrees" not in graph["paseo.projects"]
    assert "paseo.workspaces" not in graph["paseo.worktrees"]
