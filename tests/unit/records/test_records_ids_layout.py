"""Identifier generators and shapes, the ``agents/`` directory naming rule, and package rules."""

from __future__ import annotations

import inspect
import subprocess
import sys
import uuid
from typing import ClassVar

import paseo_hookspecs.records as records
import pytest
from paseo_hookspecs.records import (
    PROJECT_ID_PATTERN,
    SCHEDULE_ID_PATTERN,
    WORKSPACE_ID_PATTERN,
    RecordModel,
    agent_record_path,
    is_opaque_project_id,
    new_agent_id,
    new_project_id,
    new_schedule_id,
    new_workspace_id,
    project_id_shape,
    sanitize_cwd,
)


def test_new_project_id_format() -> None:
    ids = {new_project_id() for _ in range(200)}
    assert len(ids) == 200
    for project_id in ids:
        assert PROJECT_ID_PATTERN.fullmatch(project_id)
        assert len(project_id) == len("prj_") + 16


def test_new_workspace_id_format() -> None:
    ids = {new_workspace_id() for _ in range(200)}
    assert len(ids) == 200
    for workspace_id in ids:
        assert WORKSPACE_ID_PATTERN.fullmatch(workspace_id)
        assert len(workspace_id) == len("wks_") + 16


def test_new_schedule_id_format() -> None:
    ids = {new_schedule_id() for _ in range(200)}
    assert len(ids) > 190
    assert all(SCHEDULE_ID_PATTERN.fullmatch(i) for i in ids)


def test_new_agent_id_is_a_canonical_uuid4() -> None:
    agent_id = new_agent_id()
    parsed = uuid.UUID(agent_id)
    assert parsed.version == 4
    assert str(parsed) == agent_id


@pytest.mark.parametrize(
    ("project_id", "shape"),
    [
        ("prj_8f3a2b1c9d0e4f57", "opaque"),
        ("prj_8F3A2B1C9D0E4F57", "path"),
        ("prj_8f3a2b1c9d0e4f5", "path"),
        ("remote:github.com/acme/api", "remote"),
        ("/Users/alice/notes", "path"),
        ("C:\\Users\\bob\\tool", "path"),
    ],
)
def test_project_id_shape(project_id: str, shape: str) -> None:
    assert project_id_shape(project_id) == shape
    assert is_opaque_project_id(project_id) == (shape == "opaque")


@pytest.mark.parametrize(
    ("cwd", "directory"),
    [
        ("/Users/alice/code/api", "Users-alice-code-api"),
        ("/Users/alice/code/api/", "Users-alice-code-api"),
        ("/Users/alice//code///api//", "Users-alice-code-api"),
        ("/home/u/.paseo/worktrees/api/fix-login/web", "home-u-.paseo-worktrees-api-fix-login-web"),
        ("/", "root"),
        ("", "root"),
        ("//", "root"),
        ("relative/path", "relative-path"),
        ("C:\\Users\\bob\\src\\tool", "C-Users-bob-src-tool"),
        ("C:/Users/bob/", "C-Users-bob"),
        ("c:\\work", "c-work"),
        ("C:\\", "C"),
        ("C:", "C"),
        ("C:foo\\bar", "C-foo-bar"),
        ("\\\\server\\share\\dir\\x", "server-share-dir-x"),
        ("//server/share/dir", "server-share-dir"),
        ("\\\\server\\share", "server-share"),
        ("//server/share//dir", "server-share--dir"),
        # A doubled separator that is not a UNC root leaves the second one as a leading "-".
        ("//server", "-server"),
        ("///x/y", "-x-y"),
        ("/a-b/c", "a-b-c"),
    ],
)
def test_sanitize_cwd(cwd: str, directory: str) -> None:
    """Cases checked against the TypeScript rule (Node's ``path.win32.parse`` root)."""
    assert sanitize_cwd(cwd) == directory


def test_agent_record_path() -> None:
    agent_id = new_agent_id()
    path = agent_record_path(agent_id, "C:\\Users\\bob\\src\\tool")
    assert str(path) == f"agents/C-Users-bob-src-tool/{agent_id}.json"


def _record_models() -> list[type[RecordModel]]:
    found: dict[str, type[RecordModel]] = {}
    for name in records.__all__:
        value = getattr(records, name)
        if inspect.isclass(value) and issubclass(value, RecordModel) and value is not RecordModel:
            found[name] = value
            for field in value.model_fields.values():
                for arg in getattr(field.annotation, "__args__", (field.annotation,)):
                    if inspect.isclass(arg) and issubclass(arg, RecordModel):
                        found.setdefault(arg.__name__, arg)
    return list(found.values())


@pytest.mark.parametrize("model", _record_models(), ids=lambda m: m.__name__)
def test_every_record_model_keeps_unknown_fields_and_has_a_docstring(
    model: type[RecordModel],
) -> None:
    assert model.model_config.get("extra") == "allow"
    assert model.model_config.get("strict") is True
    assert (model.__doc__ or "").strip()


def test_declaring_an_unknown_always_emit_field_fails_at_class_creation() -> None:
    with pytest.raises(TypeError, match="undeclared"):

        class Broken(RecordModel):
            ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"nope"})
            field: str


def test_records_do_not_import_the_daemon() -> None:
    code = (
        "import sys, paseo_hookspecs.records; "
        "leaked = sorted(m for m in sys.modules if m == 'paseo' or m.startswith('paseo.')); "
        "print(leaked); raise SystemExit(1 if leaked else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
