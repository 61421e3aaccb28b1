"""Which variables a Hub may set in its agents' environment (``env`` of a create request).

The Hub's ``env`` is added to the environment of every program the agent runs, on this
machine, with the user's own credentials at hand. A Hub is trusted to run agents, not to
change what those programs are or where they talk to, so a create whose ``env`` names any of
the following is refused (``create_failed``, naming the variables) and nothing is made:

* the dynamic loader and language runtimes' start-up hooks: ``LD_*``, ``DYLD_*``,
  ``NODE_OPTIONS``, ``PYTHONPATH`` and the like (code injected into every program);
* where programs and their configuration are found: ``PATH``, ``HOME``, ``XDG_CONFIG_HOME``,
  a provider's configuration directory (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, …);
* where a provider sends its requests, the user's API key with them: any ``*_BASE_URL``
  (``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``, …), ``OPENAI_API_BASE``, any ``*_PROXY`` and
  the TLS trust settings a proxy would need (``NODE_EXTRA_CA_CERTS``, ``SSL_CERT_FILE``, …);
* this daemon's own settings: every ``PASEO_*`` except the Hub's documented
  ``PASEO_AGENT_PROVIDER``, ``PASEO_AGENT_MODE`` and ``PASEO_HUB_*``.

Names are compared upper-cased (many programs honour ``http_proxy`` as well). Anything else,
the secrets the Hub materialises for its agents among them, is passed on.
"""

from __future__ import annotations

from collections.abc import Iterable

DENIED = frozenset(
    {
        # code run by every program
        "NODE_OPTIONS",
        "NODE_PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "PYTHONUSERBASE",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "PROMPT_COMMAND",
        "GIT_SSH_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_COUNT",
        # where programs and configuration are found
        "PATH",
        "HOME",
        "SHELL",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "OPENCODE_CONFIG",
        "OPENCODE_CONFIG_DIR",
        "COPILOT_HOME",
        "GEMINI_CLI_HOME",
        # where requests (and the user's key) go
        "OPENAI_API_BASE",
        "ANTHROPIC_API_URL",
        "NODE_EXTRA_CA_CERTS",
        "NODE_TLS_REJECT_UNAUTHORIZED",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    }
)
DENIED_PREFIXES = ("LD_", "DYLD_", "PASEO_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
DENIED_SUFFIXES = ("_BASE_URL", "_PROXY")
ALLOWED = frozenset({"PASEO_AGENT_PROVIDER", "PASEO_AGENT_MODE"})
ALLOWED_PREFIXES = ("PASEO_HUB_",)
SHOWN = 8
"""Refused names listed in the error; the Hub needs no more to see what it did."""


def denied(name: str) -> bool:
    upper = name.upper()
    if upper in ALLOWED or upper.startswith(ALLOWED_PREFIXES):
        return False
    return upper in DENIED or upper.startswith(DENIED_PREFIXES) or upper.endswith(DENIED_SUFFIXES)


def refusal(names: Iterable[str]) -> str | None:
    """Why an ``env`` with these names is refused (``None``: it is accepted)."""
    bad = sorted(name for name in names if denied(name))
    if not bad:
        return None
    shown = ", ".join(name[:64] for name in bad[:SHOWN])
    more = f" and {len(bad) - SHOWN} more" if len(bad) > SHOWN else ""
    return (
        f"the create's env may not set {shown}{more}: a Hub may not change which programs an "
        "agent runs, how they start, or where they send requests (docs/hub.md, 'env')"
    )
