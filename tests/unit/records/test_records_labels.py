"""Workspace label catalog: colours, name normalization, identity and the transaction file."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from paseo_hookspecs.records import (
    WORKSPACE_LABEL_COLORS,
    WorkspaceLabelColor,
    WorkspaceLabelDefinition,
    WorkspaceLabelsFile,
    WorkspaceLabelTransaction,
    dump_record,
    duplicate_label_identities,
    is_reserved_label_name,
    label_identity,
    normalize_label_name,
)
from pydantic import ValidationError


def test_the_ten_identity_colours_in_canonical_order() -> None:
    assert WORKSPACE_LABEL_COLORS == (
        "violet",
        "sky",
        "emerald",
        "orange",
        "pink",
        "indigo",
        "teal",
        "red",
        "amber",
        "blue",
    )
    assert get_args(WorkspaceLabelColor) == WORKSPACE_LABEL_COLORS


@pytest.mark.parametrize("color", WORKSPACE_LABEL_COLORS)
def test_every_colour_is_accepted(color: str) -> None:
    raw = {"name": "Backend", "color": color}
    assert dump_record(WorkspaceLabelDefinition.model_validate(raw)) == raw


@pytest.mark.parametrize("color", ["green", "Violet", "", None, 3])
def test_other_colours_are_rejected(color: Any) -> None:
    with pytest.raises(ValidationError):
        WorkspaceLabelDefinition.model_validate({"name": "Backend", "color": color})


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("Backend", "Backend"),
        ("  Bug   fix  ", "Bug fix"),
        ("\tNeeds\n\nreview\r\n", "Needs review"),
        ("a\u00a0\u2003b", "a b"),
        ("\ufeffTagged\u3000", "Tagged"),
        ("   ", ""),
        ("", ""),
        # Not whitespace in JavaScript, so kept as the TypeScript daemon keeps them.
        ("a\u200bb", "a\u200bb"),
        ("a\x1cb", "a\x1cb"),
        ("a\x85b", "a\x85b"),
    ],
)
def test_normalize_label_name(name: str, normalized: str) -> None:
    assert normalize_label_name(name) == normalized


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("Backend", "backend"),
        ("  Bug  Fix", "bug fix "),
        ("URGENT", "urgent"),
        ("Straße", "STRASSE"),
    ],
)
def test_equal_identities(left: str, right: str) -> None:
    assert label_identity(left) == label_identity(right)


@pytest.mark.parametrize(("left", "right"), [("Bug fix", "Bugfix"), ("Docs", "Doc s")])
def test_distinct_identities(left: str, right: str) -> None:
    assert label_identity(left) != label_identity(right)


def test_duplicate_label_identities() -> None:
    names = ["Backend", "Urgent", " backend", "Docs", "URGENT", "BACKEND"]
    assert duplicate_label_identities(names) == ["backend", "urgent"]
    assert duplicate_label_identities(["a", "b"]) == []


def test_reserved_labels() -> None:
    assert is_reserved_label_name("paseo:reserved:v1:placement-role=default")
    assert is_reserved_label_name("  PASEO:Reserved:v1:logical-workspace-ref=web")
    assert not is_reserved_label_name("paseo: reserved")


def test_catalog_file_round_trips_and_keeps_duplicates_readable() -> None:
    raw = [
        {"name": "Backend", "color": "sky"},
        {"name": "backend", "color": "red", "description": "from a newer writer"},
    ]
    catalog = WorkspaceLabelsFile.model_validate(raw)
    assert dump_record(catalog) == raw
    assert duplicate_label_identities(label.name for label in catalog.root) == ["backend"]


def test_catalog_file_must_be_a_list() -> None:
    with pytest.raises(ValidationError):
        WorkspaceLabelsFile.model_validate({"labels": []})


def transaction(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "phase": "prepared",
        "beforeLabels": [{"name": "Urgent", "color": "red"}],
        "afterLabels": [],
        "beforeWorkspaces": [
            {"workspaceId": "wks_1", "labels": ["Urgent"], "updatedAt": "2026-05-01T00:00:00.000Z"}
        ],
        "afterWorkspaces": [{"workspaceId": "wks_1", "updatedAt": "2026-05-02T00:00:00.000Z"}],
    }
    raw.update(overrides)
    return raw


@pytest.mark.parametrize("phase", ["prepared", "committed"])
def test_transaction_round_trips(phase: str) -> None:
    raw = transaction(phase=phase)
    record = WorkspaceLabelTransaction.model_validate(raw)
    assert record.afterWorkspaces[0].labels is None
    assert dump_record(record) == raw


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("phase", "applied"),
        ("afterLabels", [{"name": "X", "color": "black"}]),
        ("beforeWorkspaces", [{"workspaceId": "w", "labels": None, "updatedAt": "t"}]),
        ("beforeWorkspaces", [{"workspaceId": "w"}]),
        ("afterWorkspaces", None),
    ],
)
def test_invalid_transaction_is_rejected(field: str, value: Any) -> None:
    with pytest.raises(ValidationError):
        WorkspaceLabelTransaction.model_validate(transaction(**{field: value}))
