"""The kernel's modules import each other without cycles: every import counts (inside
functions, under ``TYPE_CHECKING``), relative ones resolved."""

from __future__ import annotations

from helpers.import_graph import REPO, cycles, module_graph


def test_cycle_finder_reports_a_concrete_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]


def test_the_kernel_has_no_import_cycle() -> None:
    found = cycles(module_graph(REPO / "paseo"))
    assert not found, "import cycles in paseo/:\n" + "\n".join(" -> ".join(c) for c in found)
