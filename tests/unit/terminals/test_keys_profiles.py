"""send-keys tokens and the terminal profile rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from paseo_hookspecs.terminals import encode_keys, key_bytes

from paseo.cli.commands._terminalcli import match_terminal
from paseo.cli.errors import CliError
from paseo.config import load_config
from paseo.config.models import TerminalProfile
from paseo.terminals.profiles import argv_for, effective_profiles
from paseo.terminals.service import TerminalService


@pytest.mark.parametrize(
    ("token", "sent"),
    [
        ("Enter", "\r"),
        ("Tab", "\t"),
        ("Escape", "\x1b"),
        ("Up", "\x1b[A"),
        ("Left", "\x1b[D"),
        ("C-c", "\x03"),
        ("C-D", "\x04"),
        ("C-[", "\x1b"),
        ("M-x", "\x1bx"),
        ("M-Enter", "\x1b\r"),
        ("hello", "hello"),
        ("C-", "C-"),
    ],
)
def test_key_tokens(token: str, sent: str) -> None:
    assert key_bytes(token) == sent


def test_keys_are_sent_without_separators_and_literally_with_l() -> None:
    assert encode_keys(["echo hi", "Enter"], literal=False) == "echo hi\r"
    assert encode_keys(["echo", "Enter"], literal=True) == "echoEnter"


def test_terminals_are_named_by_id_or_unique_prefix() -> None:
    terminals = [{"terminalId": "abc123"}, {"terminalId": "abd456"}]
    assert match_terminal(terminals, "abc123") == "abc123"
    assert match_terminal(terminals, "abd") == "abd456"
    with pytest.raises(CliError, match="ambiguous"):
        match_terminal(terminals, "ab")
    with pytest.raises(CliError, match="no terminal"):
        match_terminal(terminals, "zz")


def _profile(profile_id: str, *args: str) -> TerminalProfile:
    return TerminalProfile(id=profile_id, name=profile_id.title(), command="prog", args=list(args))


def test_absent_means_the_shell_then_the_provider_profiles() -> None:
    agent = _profile("agent")
    profiles = effective_profiles(None, providers=lambda: [agent])
    assert [p.id for p in profiles] == ["shell", "agent"]


def test_empty_means_none_and_a_list_means_exactly_that_list() -> None:
    agent = _profile("agent")
    assert effective_profiles([], providers=lambda: [agent]) == []
    custom = [_profile("b"), _profile("a")]
    assert effective_profiles(custom, providers=lambda: [agent]) == custom


def test_the_prompt_fills_its_argument_or_drops_it() -> None:
    profile = _profile("p", "--flag", "--prompt={{{prompt}}}")
    assert argv_for(profile, "fix it") == ["prog", "--flag", "--prompt=fix it"]
    assert argv_for(profile, None) == ["prog", "--flag"]


class _Config:
    def __init__(self, path: Path) -> None:
        self.resolved = load_config(path, env={}, home=path.parent).resolved


class _NoStore:
    managed_processes = None
    workspaces = None


def _service_profiles(tmp_path: Path, text: str | None) -> list[str]:
    path = tmp_path / "config.json"
    if text is not None:
        path.write_text(text)
    service = TerminalService(
        store=_NoStore(),  # type: ignore[arg-type]
        publisher=None,  # type: ignore[arg-type]
        config=_Config(path),
        placement=None,  # type: ignore[arg-type]
        profiles=lambda: [_profile("agent")],
    )
    return [p.id for p in service.profiles()]


def test_the_service_reads_absent_empty_and_custom_from_the_resolved_config(
    tmp_path: Path,
) -> None:
    assert _service_profiles(tmp_path, None) == ["shell", "agent"]
    assert _service_profiles(tmp_path, '{"daemon": {"terminalProfiles": []}}') == []
    custom = '{"daemon": {"terminalProfiles": [{"id": "x", "name": "X", "command": "sh"}]}}'
    assert _service_profiles(tmp_path, custom) == ["x"]
