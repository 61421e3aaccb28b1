"""The composition root builds each service from its ports and binds nothing afterwards: no
attribute of a built service is assigned, added to or appended to in ``paseo/daemon/wiring.py``
(where two services need each other, one subscribes to the other's events or takes a port at
construction). Only ``composition``, the product being assembled, is filled in."""

from __future__ import annotations

import ast

from helpers.import_graph import REPO

WIRING = REPO / "paseo" / "daemon" / "wiring.py"

ASSEMBLED = frozenset({"composition"})
"""Names whose attributes the root may fill: what it returns, not a service."""

MUTATORS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "__setitem__"})
"""Methods that change a container held in a service's attribute."""


def _root(node: ast.expr) -> str | None:
    """The name an attribute/subscript chain starts from (``a`` of ``a.b[c].d``)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _built(tree: ast.AST) -> set[str]:
    """Every local name bound by an assignment in the module's functions: the services, the
    ports and the helpers the root builds."""
    names: set[str] = set()
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                targets = [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names - ASSEMBLED


def setter_injections(source: str) -> list[str]:
    """``line: code`` of every statement binding something into a built object."""
    tree = ast.parse(source)
    built = _built(tree)
    found: list[tuple[int, str]] = []

    def offend(node: ast.stmt | ast.expr) -> None:
        found.append((node.lineno, ast.unparse(node)))

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute | ast.Subscript) and _root(target) in built:
                    offend(node)
        elif isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in MUTATORS
                and isinstance(func.value, ast.Attribute | ast.Subscript)
                and _root(func.value) in built
            ) or (
                isinstance(func, ast.Name)
                and func.id in ("setattr", "delattr")
                and node.args
                and _root(node.args[0]) in built
            ):
                offend(node)
    return [f"{line}: {code}" for line, code in sorted(found)]


def test_the_composition_root_injects_nothing_after_construction() -> None:
    offenders = setter_injections(WIRING.read_text(encoding="utf-8"))
    assert not offenders, "setter injection in wiring.py:\n" + "\n".join(offenders)


def test_the_check_sees_each_kind_of_setter_injection() -> None:
    source = """
def compose(daemon):
    composition = Composition()
    agents = AgentService()
    workspaces = WorkspacesService()
    terminals = TerminalService()
    agents.titles = metadata
    workspaces.placement.worktrees.branch_namer = metadata.branch_name
    workspaces.placement.running_sources += [terminals.active_workspaces]
    terminals.activity_listeners.append(workspaces.status.recheck)
    workspaces.placement.sources["terminals"] = terminals
    setattr(agents, "titles", metadata)
    composition.groups.extend(groups)
    composition.agents = agents
    events.subscribe(workspaces.status, name="workspace-status")
    return composition
"""
    assert [line.split(": ", 1)[0] for line in setter_injections(source)] == [
        "7",
        "8",
        "9",
        "10",
        "11",
        "12",
    ]
