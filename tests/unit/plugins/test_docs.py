"""``docs/plugins.md`` documents every hook and every argument of every hook."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from paseo_hookspecs import specs

from paseo.plugins import hookspec_names

DOC = Path(__file__).resolve().parents[3] / "docs" / "plugins.md"


def _sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^### `(paseo_\w+)\(", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


@pytest.mark.parametrize("hook", hookspec_names())
def test_every_hookspec_and_argument_is_documented(hook: str) -> None:
    sections = _sections()
    assert hook in sections, f"docs/plugins.md has no `### `{hook}(…)` section"
    signature = inspect.signature(getattr(specs, hook))
    heading, _, body = sections[hook].partition("\n")
    for name in signature.parameters:
        assert name in heading, f"{hook}: argument {name} missing from the heading"
        assert f"- `{name}`" in body, f"{hook}: argument {name} is not described"


def test_no_documented_hook_is_stale() -> None:
    assert set(_sections()) <= set(hookspec_names())
