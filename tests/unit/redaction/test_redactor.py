"""The redactor on text, data, timeline entries and log records; its config validation."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from paseo_hookspecs.events import AssistantMessageItem, ShellDetail, Timeline, ToolCallItem
from paseo_store_json import JsonStore
from pydantic import ValidationError

from paseo.agents.timeline import AgentTimeline, Committed
from paseo.config import ConfigError, load_config
from paseo.logs import configure_logging
from paseo.redaction import RedactionConfig, build_redactor
from paseo.redaction.redactor import Redactor

ANTHROPIC = "sk-ant-api03-" + "A1b2C3d4" * 5
CASES = [
    (f"echo {ANTHROPIC} done", "echo [REDACTED:anthropic] done"),
    ("key sk-proj-" + "x" * 30, "key [REDACTED:openai]"),
    ("sk-" + "Q" * 40, "[REDACTED:openai]"),
    ("ghp_" + "a" * 36, "[REDACTED:github]"),
    ("github_pat_" + "B" * 40, "[REDACTED:github]"),
    ("id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED:aws-access-key]."),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = [REDACTED:aws-secret]",
    ),
    ("xoxb-123456789012-abcdefABCDEF", "[REDACTED:slack]"),
    ("Authorization: Bearer abc.def.ghijklmnop", "Authorization: Bearer [REDACTED:bearer]"),
    (
        "a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\nNza\n-----END OPENSSH PRIVATE KEY-----\nz",
        "a\n[REDACTED:private-key]\nz",
    ),
    ("-----BEGIN PRIVATE KEY-----\ncut short", "[REDACTED:private-key]"),
    ("DB_PASSWORD=hunter22 next", "DB_PASSWORD=[REDACTED:assignment] next"),
    ("export MY_TOKEN='a b c'", "export MY_TOKEN=[REDACTED:assignment]"),
    ("SECRET=x;", "SECRET=[REDACTED:assignment];"),
    (f"ANTHROPIC_API_KEY={ANTHROPIC}", "ANTHROPIC_API_KEY=[REDACTED:anthropic]"),
]
HARMLESS = [
    "the keyboard and the token bucket",
    "token = get_token()",
    "ask-anything sk- short",
    "https://example.com/path?a=b",
    "",
]


@pytest.fixture
def redactor() -> Redactor:
    built = build_redactor(None, {})
    assert built is not None
    return built


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_known_shapes_are_replaced(redactor: Redactor, text: str, expected: str) -> None:
    assert redactor.text(text) == expected


@pytest.mark.parametrize("text", HARMLESS)
def test_ordinary_text_is_the_same_object(redactor: Redactor, text: str) -> None:
    assert redactor.text(text) is text


def test_secret_environment_values_are_replaced_by_name() -> None:
    env = {
        "OPENAI_API_KEY": "plain-value-12345",
        "GH_TOKEN": "another-one-6789",
        "SHORT_TOKEN": "abc",  # too short to be told from ordinary text
        "HOME": "/home/someone-long",
    }
    redactor = build_redactor(None, env)
    assert redactor is not None
    out = redactor.text("a plain-value-12345 b another-one-6789 abc /home/someone-long")
    assert out == (
        "a [REDACTED:env:OPENAI_API_KEY] b [REDACTED:env:GH_TOKEN] abc /home/someone-long"
    )
    off = build_redactor(RedactionConfig(environment=False), env)
    assert off is not None
    assert off.text("plain-value-12345") == "plain-value-12345"


def test_custom_patterns_and_turning_it_off() -> None:
    config = RedactionConfig.model_validate(
        {"patterns": [{"name": "ticket", "regex": r"TICKET-\d{4,}"}]}
    )
    redactor = build_redactor(config, {})
    assert redactor is not None
    assert redactor.text("see TICKET-12345") == "see [REDACTED:ticket]"
    assert build_redactor(RedactionConfig(enabled=False), {}) is None


@pytest.mark.parametrize(
    ("regex", "why"),
    [("([a-z]", "invalid regular expression"), ("x*", "empty string"), ("a(?i)b", "scoped")],
)
def test_bad_custom_patterns_are_refused(regex: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        RedactionConfig.model_validate({"patterns": [{"name": "p", "regex": regex}]})


def test_a_bad_pattern_is_refused_as_start_up_refuses_config(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"daemon": {"redaction": {"patterns": [{"name": "p", "regex": "(["}]}}})
    )
    with pytest.raises(ConfigError, match=r"daemon\.redaction\.patterns"):
        load_config(path, env={}, home=tmp_path)
    path.write_text(json.dumps({"daemon": {"redaction": {"enabled": False}}}))
    assert load_config(path, env={}, home=tmp_path).redaction.enabled is False


def test_data_is_copied_only_where_it_changed(redactor: Redactor) -> None:
    data = {"a": {"b": ["ok", f"k={ANTHROPIC}"]}, "c": {"d": "fine"}, "n": 3}
    out = redactor.data(data)
    assert out == {"a": {"b": ["ok", "k=[REDACTED:anthropic]"]}, "c": {"d": "fine"}, "n": 3}
    assert out["c"] is data["c"]
    assert data["a"]["b"][1] == f"k={ANTHROPIC}"
    clean = {"x": ["y", {"z": "w"}]}
    assert redactor.data(clean) is clean


def test_timeline_entries_are_redacted_as_they_are_made(tmp_path: Path, redactor: Redactor) -> None:
    committed: list[Committed] = []

    async def commit(batch: list[Committed]) -> None:
        committed.extend(batch)

    async def run() -> list[str]:
        store = JsonStore(tmp_path)
        await store.open()
        try:
            agent = "aaaa1111-0000-4000-8000-000000000001"
            timeline = AgentTimeline(agent, store.timeline, commit, redactor=redactor)
            # A key split across two streamed chunks of one message is whole once merged.
            for chunk in ("here: sk-ant-api03-", ANTHROPIC.removeprefix("sk-ant-api03-")):
                await timeline.add(
                    Timeline(provider="p", item=AssistantMessageItem(text=chunk, messageId="m"))
                )
            detail = ShellDetail(command="env", output=f"TOKEN={ANTHROPIC}")
            tool = ToolCallItem(callId="c1", name="Bash", status="completed", detail=detail)
            await asyncio.wait_for(timeline.add(Timeline(provider="p", item=tool)), 10)
            await asyncio.wait_for(timeline.drain(), 10)
            return [json.dumps(e.event) for e in await store.timeline.read(agent)]
        finally:
            await store.close()

    stored = asyncio.run(run())
    assert len(stored) == 2
    assert not [s for s in stored if ANTHROPIC in s]
    assert "here: [REDACTED:anthropic]" in stored[0]
    assert "[REDACTED:anthropic]" in stored[1]
    # The typed event observers get says the same as the stored entry.
    assert all(ANTHROPIC not in c.event.model_dump_json() for c in committed)
    for c in committed:
        assert c.event.model_dump(mode="json", exclude_none=True) == c.entry.event


@pytest.mark.parametrize("fmt", ["pretty", "json"])
def test_log_records_are_redacted(tmp_path: Path, redactor: Redactor, fmt: str) -> None:
    path = tmp_path / "daemon.log"
    configure_logging(
        file_path=path,
        file_level="debug",
        file_format=fmt,
        max_bytes=1 << 20,
        backups=1,
        console_level=None,
        redactor=redactor,
    )
    log = logging.getLogger("paseo.test.redaction")
    try:
        log.info("agent printed %s", ANTHROPIC)
        try:
            raise RuntimeError(f"failed with {ANTHROPIC}")
        except RuntimeError:
            log.exception("boom")
    finally:
        for handler in list(logging.getLogger("paseo").handlers):
            handler.close()
            logging.getLogger("paseo").removeHandler(handler)
    text = path.read_text()
    assert ANTHROPIC not in text
    assert text.count("[REDACTED:anthropic]") >= 2


def test_the_cli_log_is_redacted(tmp_path: Path) -> None:
    from paseo.cli.app import _log_traceback

    try:
        raise RuntimeError(f"the daemon refused {ANTHROPIC}")
    except RuntimeError as error:
        written = _log_traceback(error, ["--home", str(tmp_path), "send", "main", ANTHROPIC])
    assert written == str(tmp_path / "cli.log")
    text = (tmp_path / "cli.log").read_text()
    assert ANTHROPIC not in text
    assert text.count("[REDACTED:anthropic]") >= 2
    assert "Traceback (most recent call last)" in text
