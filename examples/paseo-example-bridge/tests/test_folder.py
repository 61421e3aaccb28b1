"""The folder's protocol on its own (no daemon): which files are prompts and answers, what an
answer says, and the permission file a request becomes. The whole bridge runs against a real
daemon and a real agent in Paseo's tests/e2e/bridge and .ci/example-bridge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from paseo_example_bridge.folder import BadAnswer, Files, answer_names, parse_answer, prompt_names
from paseo_example_bridge.settings import BridgeSettings, settings_of
from paseo_hookspecs.agents import PermissionAnswer
from paseo_hookspecs.events import PermissionRequest


def test_prompts_are_the_named_prompt_files(tmp_path: Path) -> None:
    for name in ("b.prompt", "a.prompt", ".a.prompt.1f2e3d.tmp", "x.txt", "bad name.prompt"):
        (tmp_path / name).write_text("hi")
    (tmp_path / "dir.prompt").mkdir()
    assert prompt_names(tmp_path) == ["a", "b"]
    assert prompt_names(tmp_path / "missing") == []


def test_answers_are_found_by_name(tmp_path: Path) -> None:
    (tmp_path / "a.answer").write_text("allow")
    (tmp_path / "a.prompt").write_text("hi")
    assert answer_names(tmp_path) == ["a"]


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("allow\n", PermissionAnswer(behavior="allow")),
        ("  ALLOW  ", PermissionAnswer(behavior="allow")),
        ("deny", PermissionAnswer(behavior="deny")),
        ("deny not that file\n", PermissionAnswer(behavior="deny", message="not that file")),
    ],
)
def test_an_answer_is_allow_or_deny(text: str, answer: PermissionAnswer) -> None:
    assert parse_answer(text) == answer


def test_anything_else_is_refused() -> None:
    with pytest.raises(BadAnswer, match="must start with allow or deny"):
        parse_answer("maybe later")


def test_a_request_becomes_a_permission_file_naming_it(tmp_path: Path) -> None:
    files = Files(tmp_path, "edit")
    assert files.pending_request_id() is None
    request = PermissionRequest(
        id="req-1", title="Write allowed.txt", toolName="Write", input={"file_path": "a.txt"}
    )
    files.write_permission("agt_1", request)
    document = json.loads(files.permission.read_text())
    assert document["agentId"] == "agt_1"
    assert document["input"] == {"file_path": "a.txt"}
    assert document["answer"] == "write allow or deny to edit.answer"
    assert files.pending_request_id() == "req-1"
    files.permission.write_text("{not json")
    assert files.pending_request_id() is None


def test_the_log_grows_a_json_line_per_entry(tmp_path: Path) -> None:
    files = Files(tmp_path, "a")
    files.append_log({"seq": 1, "type": "turn_started"})
    files.append_log({"seq": 2, "type": "turn_completed"})
    lines = [json.loads(line) for line in files.log.read_text().splitlines()]
    assert [line["seq"] for line in lines] == [1, 2]


def test_settings_default_to_the_home_and_refuse_relative_paths(tmp_path: Path) -> None:
    settings = settings_of(None)
    assert settings.folder_path(tmp_path) == tmp_path / "bridge"
    assert settings.cwd_path(tmp_path) == tmp_path / "bridge"
    chosen = settings_of({"folder": str(tmp_path / "in"), "cwd": str(tmp_path / "work")})
    assert chosen.cwd_path(Path("/elsewhere")) == tmp_path / "work"
    with pytest.raises(ValueError, match="absolute"):
        BridgeSettings(folder="relative/inbox")
