"""The built-in shapes of secrets: a kind, a regular expression, and the literal triggers.

A pattern runs only on text holding one of its *triggers* (plain substrings every match must
contain), which a substring test finds far faster than any regular expression: most text holds
none, so it costs a few ``in`` tests. A pattern's first group, when it has one, is kept: it is
the name in ``API_KEY=…`` or the ``Bearer`` of a header, which say what was there without being
the secret. Order matters: a specific shape (``sk-ant-``) is tried before a more general one
(``sk-``), and assignments come last so ``ANTHROPIC_API_KEY=sk-ant-…`` names the key's shape.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class Shape(NamedTuple):
    kind: str
    regex: str
    needles: tuple[str, ...] = ()
    """Substrings one of which every match contains; none: the pattern always runs."""
    gate: str = ""
    """Characters one of which every match contains, tested first (a memchr each)."""


_VALUE = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s"'`,;&|<>)\]}]+)"""
VALUE = re.compile(_VALUE)
"""An assigned value: quoted, or up to a space, quote or shell separator."""

BUILTIN: tuple[Shape, ...] = (
    Shape(
        "private-key",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
        ("PRIVATE KEY",),
        "-",
    ),
    Shape("anthropic", r"\bsk-ant-[A-Za-z0-9_\-]{8,}", ("sk-",), "-"),
    Shape("openai", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",), "-"),
    Shape(
        "github",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})",
        ("gh", "_pat_"),
        "_",
    ),
    Shape("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", ("AKIA", "ASIA"), "A"),
    Shape(
        "aws-secret",
        r"(aws_secret_access_key\s*[=:]\s*[\"']?)[A-Za-z0-9/+]{40}",
        ("aws_secret_access_key",),
        "_",
    ),
    Shape("slack", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", ("xox",), "-"),
    Shape("bearer", r"(\b[Bb]earer\s+)[A-Za-z0-9._~+/\-]{8,}=*", ("earer",)),
)
"""Tried in this order; ``NAME=value`` assignments (:func:`assignments`) come after them."""

ASSIGNMENT = "assignment"
ASSIGNMENT_WORDS = ("key", "token", "secret", "password", "passwd")
"""Assignments to a name ending in one of these (any case: ``API_KEY=``, ``db_password=``)
have their value replaced."""
_LONGEST_WORD = max(map(len, ASSIGNMENT_WORDS))


def assignments(text: str, marker: str) -> str:
    """``text`` with the values of secret-named assignments replaced by ``marker``.

    Found from each ``=`` (a fast ``find``) by looking at the few characters before it, so the
    cost is one step per ``=`` rather than a regular expression tried at every position.
    """
    out: list[str] = []
    last = 0
    at = text.find("=")
    while at != -1:
        before = text[max(0, at - _LONGEST_WORD) : at].lower()
        value = VALUE.match(text, at + 1) if before.endswith(ASSIGNMENT_WORDS) else None
        if value is not None and not text.startswith("[REDACTED", at + 1):
            out += (text[last : at + 1], marker)
            last = value.end()
            at = text.find("=", last)
        else:
            at = text.find("=", at + 1)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


SECRET_ENV_NAME = re.compile(r"(?:^|_)(?:API_KEY|TOKEN|SECRET|PASSWORD)$")
"""Environment variables whose values are secrets (``ANTHROPIC_API_KEY``, ``GH_TOKEN``, …)."""

MIN_SECRET_LENGTH = 8
"""Shorter values (``PASSWORD=x``) are too likely to occur in ordinary text to be replaced."""
