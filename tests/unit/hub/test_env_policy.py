"""The Hub's env denylist: what it refuses, what it lets through, and that docs/hub.md lists it."""

from __future__ import annotations

from pathlib import Path

import pytest
from paseo_hub import env_policy

DOC = Path(__file__).resolve().parents[3] / "docs" / "hub.md"


@pytest.mark.parametrize(
    "name",
    [
        "LD_PRELOAD",
        "ld_preload",
        "DYLD_INSERT_LIBRARIES",
        "PATH",
        "NODE_OPTIONS",
        "PASEO_HOME",
        "PASEO_AGENT_ID",
        "ANTHROPIC_BASE_URL",
        "OPENAI_BASE_URL",
        "GOOGLE_GEMINI_BASE_URL",
        "http_proxy",
        "HTTPS_PROXY",
        "CODEX_HOME",
        "GIT_CONFIG_KEY_0",
    ],
)
def test_denied(name: str) -> None:
    assert env_policy.denied(name)
    refusal = env_policy.refusal({"GITHUB_TOKEN": "x", name: "y"})
    assert refusal is not None
    assert name in refusal
    assert "GITHUB_TOKEN" not in refusal


@pytest.mark.parametrize(
    "name",
    [
        "PASEO_AGENT_PROVIDER",
        "PASEO_AGENT_MODE",
        "PASEO_HUB_CONFIG_JSON",
        "GITHUB_TOKEN",
        "ANTHROPIC_API_KEY",
        "LDAP_SERVER",
    ],
)
def test_allowed(name: str) -> None:
    assert not env_policy.denied(name)
    assert env_policy.refusal({name: "x"}) is None


def test_a_long_refusal_is_bounded() -> None:
    refusal = env_policy.refusal({f"LD_{i}": "x" for i in range(1000)})
    assert refusal is not None
    assert "and 992 more" in refusal
    assert len(refusal) < 600


def test_docs_list_every_denied_name() -> None:
    text = DOC.read_text()
    names = [*env_policy.DENIED, *(f"{p}*" for p in env_policy.DENIED_PREFIXES[:3])]
    names += [f"*{s}" for s in env_policy.DENIED_SUFFIXES]
    missing = [name for name in names if f"`{name}`" not in text]
    assert missing == [], f"docs/hub.md does not list {missing}"
