"""The built-in shapes of secrets, each a kind and a regular expression.

A pattern's first group, when it has one, is kept: it is the name in ``API_KEY=…`` or the
``Bearer`` of a header, which say what was there without being the secret. Order matters: a
specific shape (``sk-ant-``) is tried before a more general one (``sk-``), and assignments come
last so ``ANTHROPIC_API_KEY=sk-ant-…`` names the key's shape.
"""

from __future__ import annotations

import re

_VALUE_END = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s"'`,;&|<>)\]}]+)"""

BUILTIN: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    ),
    ("anthropic", r"\bsk-ant-[A-Za-z0-9_\-]{8,}"),
    ("openai", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("aws-secret", r"(?i:(aws_secret_access_key\s*[=:]\s*[\"']?))[A-Za-z0-9/+]{40}"),
    ("slack", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    ("bearer", r"(?i:(\bbearer\s+))[A-Za-z0-9._~+/\-]{8,}=*"),
    (
        "assignment",
        r"(\b[A-Za-z0-9_]*(?i:key|token|secret|password|passwd)[A-Za-z0-9_]*=)"
        r"(?!\[REDACTED)" + _VALUE_END,
    ),
)
"""``(kind, regex)``, tried in this order."""

SECRET_ENV_NAME = re.compile(r"(?:^|_)(?:API_KEY|TOKEN|SECRET|PASSWORD)$")
"""Environment variables whose values are secrets (``ANTHROPIC_API_KEY``, ``GH_TOKEN``, …)."""

MIN_SECRET_LENGTH = 8
"""Shorter values (``PASSWORD=x``) are too likely to occur in ordinary text to be replaced."""
