"""The user documentation names everything the product offers: every command `paseo --help`
shows (and each of its sub-commands) has a row in the README's command table, and every method
and notification of the protocol schema is described in docs/protocol.md."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from paseo.cli.app import build_parser
from paseo.cli.catalog import COMMANDS, render_help

REPO = Path(__file__).resolve().parents[3]


def _command_table() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Commands", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `paseo")]


def _first_cell(row: str) -> str:
    # `\|` is a literal bar inside a cell (`--branch B \| --pr N`), not a column break.
    return re.split(r"(?<!\\)\|", row)[1]


def _subcommands(group: str) -> list[str]:
    parser = build_parser(group)
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub = action.choices[group]
    names: list[str] = []
    for child in sub._actions:
        if isinstance(child, argparse._SubParsersAction):
            # Aliases (`plugins ls`) are the same parser: document the primary name.
            seen: set[int] = set()
            for name, subparser in child.choices.items():
                if id(subparser) not in seen:
                    seen.add(id(subparser))
                    names.append(name)
    return names


def test_help_lists_exactly_the_catalog() -> None:
    shown = re.findall(r"^  (\S+)\s{2,}", render_help().split("Commands:", 1)[1], re.MULTILINE)
    assert [name for name in shown if not name.startswith("-")] == list(COMMANDS)


@pytest.mark.parametrize("group", list(COMMANDS))
def test_every_command_has_a_readme_row(group: str) -> None:
    rows = [_first_cell(row) for row in _command_table() if f"`paseo {group}" in _first_cell(row)]
    assert rows, f"README.md's command table has no row for `paseo {group}`"
    cells = " ".join(rows)
    missing = [
        name for name in _subcommands(group) if not re.search(rf"\b{re.escape(name)}\b", cells)
    ]
    assert not missing, f"README.md's rows for `paseo {group}` do not name: {', '.join(missing)}"


def test_protocol_doc_describes_every_method_and_notification() -> None:
    schema = json.loads((REPO / "docs" / "protocol.schema.json").read_text(encoding="utf-8"))
    doc = (REPO / "docs" / "protocol.md").read_text(encoding="utf-8")
    names = [*schema["methods"], *schema["notifications"]]
    missing = [name for name in names if f"`{name}`" not in doc]
    assert not missing, f"docs/protocol.md does not describe: {', '.join(missing)}"
