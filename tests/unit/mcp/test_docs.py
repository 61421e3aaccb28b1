"""docs/mcp.md is generated from the tool catalog: it fails here when it is stale."""

from __future__ import annotations

from pathlib import Path

from paseo_mcp.docs import render
from paseo_mcp.tools import TOOLS

DOC = Path(__file__).resolve().parents[3] / "docs" / "mcp.md"


def test_docs_mcp_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/mcp.md is stale: run `python -m paseo_mcp.docs docs/mcp.md`"
    )


def test_every_tool_is_documented_with_its_schema() -> None:
    text = DOC.read_text(encoding="utf-8")
    for tool in TOOLS:
        assert f"### `{tool.name}`" in text
    assert "not a security boundary" in text
