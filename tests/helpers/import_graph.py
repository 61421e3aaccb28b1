"""Reading the import statements of a source tree with ``ast`` (shared by the layering tests).

Every import counts: top level, inside functions and classes, under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Import:
    """One imported name: ``module`` (absolute, relative ones resolved) and, for
    ``from module import name``, the ``name``."""

    module: str
    name: str | None
    line: int


def module_name(root: Path, path: Path) -> str:
    """The dotted name of ``path`` relative to the directory holding the top package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path, path: Path) -> Iterator[Import]:
    """Every import in ``path`` (a module under ``root``)."""
    name = module_name(root, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, None, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                yield Import(module, alias.name, node.lineno)


def python_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.py") if "__pycache__" not in p.parts)


def module_graph(package: Path) -> dict[str, set[str]]:
    """The import graph of the package at ``package`` (edges between its own modules only).

    ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to ``pkg``.
    """
    root = package.parent
    modules = {module_name(root, path): path for path in python_files(package)}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for found in imports_of(root, path):
            target = found.module
            if found.name is not None and f"{found.module}.{found.name}" in modules:
                target = f"{found.module}.{found.name}"
            if target in modules and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (``a -> b -> … -> a``) per strongly connected component of several modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative Tarjan: the graph is deep enough to make recursion fragile.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_cycle_in(graph, set(component), component[0]) for component in components]


def _cycle_in(graph: dict[str, set[str]], members: set[str], start: str) -> list[str]:
    """A shortest path ``start -> … -> start`` inside one component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise AssertionError(f"{start} is in no cycle")
