"""The redactor: cheap substring tests decide, the patterns they select replace.

Most text holds no secret, so the hot path is a few substring tests: a pattern runs only on
text holding one of its gate characters (``-`` for ``sk-…``, a ``memchr`` each) and then one of
its needles (``sk-``); for JSON-shaped data the tests run once, on its compact JSON dump, not
per string. The regular expressions, slow in comparison, run only on strings that passed.
Strings shorter than any secret are skipped. :meth:`Redactor.text` and :meth:`Redactor.data`
return their argument itself when nothing matched, so callers tell "unchanged" by identity and
pay no copy.

Measured by ``bench/redaction.py``: CPython's substring search (about 2 ns a character on the
reference machine) makes the cost roughly one pass over an entry per needle; one combined
regular expression was tried first and was ten times slower (``re`` tries every alternative at
each position).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from paseo.redaction.patterns import (
    ASSIGNMENT,
    ASSIGNMENT_WORDS,
    BUILTIN,
    MIN_SECRET_LENGTH,
    SECRET_ENV_NAME,
    Shape,
    assignments,
)
from paseo.redaction.settings import RedactionConfig

SHORTEST = 8
"""No secret of any built-in shape or of the environment is shorter (a custom pattern may be:
it is then tried on every string)."""


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _substitute(pattern: re.Pattern[str], kind: str) -> Callable[[str], str]:
    text = marker(kind)

    def replace(match: re.Match[str]) -> str:
        # A first group is the part worth keeping ("Bearer ", "aws_secret_access_key = ").
        kept = match.group(1) if match.re.groups and match.group(1) else ""
        return kept + text

    return lambda value: pattern.sub(replace, value)


@dataclass(frozen=True)
class _Step:
    apply: Callable[[str], str]
    needles: tuple[str, ...]
    gate: str
    json_needles: tuple[bytes, ...]
    """The needles as they appear inside a JSON string (escaped, UTF-8)."""
    folded: bool = False
    """The needles are lower case and looked for in the lower-cased text."""

    def wanted(self, text: str) -> bool:
        if self.gate and not any(c in text for c in self.gate):
            return False
        if self.folded:
            text = text.lower()
        return not self.needles or any(n in text for n in self.needles)

    def wanted_in_json(self, blob: bytes) -> bool:
        if self.gate and not any(c.encode() in blob for c in self.gate):
            return False
        if self.folded:
            blob = blob.lower()
        return not self.json_needles or any(n in blob for n in self.json_needles)


def _json_form(text: str) -> bytes:
    return orjson.dumps(text)[1:-1]


class Redactor:
    """Replaces secrets in text and in JSON-shaped data."""

    def __init__(self, shapes: Iterable[Shape], secrets: Mapping[str, str] | None = None) -> None:
        # Exact values first: a known secret is named by its variable, whatever its shape.
        values = sorted(
            ((v, name) for name, v in (secrets or {}).items() if len(v) >= MIN_SECRET_LENGTH),
            key=lambda item: -len(item[0]),
        )
        ordered = [Shape(f"env:{name}", re.escape(v), (v,)) for v, name in values]
        ordered += shapes
        steps = [
            _Step(
                _substitute(re.compile(f"(?:{s.regex})"), s.kind),
                s.needles,
                s.gate,
                tuple(_json_form(n) for n in s.needles),
            )
            for s in ordered
        ]
        equals = marker(ASSIGNMENT)
        # Code is full of `=`: the names are checked first, in the lower-cased text.
        words = tuple(f"{word}=" for word in ASSIGNMENT_WORDS)
        steps.append(
            _Step(
                lambda value: assignments(value, equals),
                words,
                "=",
                tuple(w.encode() for w in words),
                folded=True,
            )
        )
        self._steps = tuple(steps)
        self._shortest = SHORTEST if all(s.needles for s in ordered) else 1

    def text(self, value: str) -> str:
        """``value`` with every secret replaced (the same object when there was none)."""
        if len(value) < self._shortest:
            return value
        return self._apply(value, self._steps)

    def data(self, value: Any) -> Any:
        """JSON-shaped ``value`` with every string redacted; ``value`` itself if unchanged.

        The steps are chosen once, on the compact JSON form of the whole value (one dump, then
        a substring test per gate and needle), and only the chosen ones look at each string.
        """
        blob = orjson.dumps(value)
        steps = tuple(step for step in self._steps if step.wanted_in_json(blob))
        return self._walk(value, steps) if steps else value

    def _apply(self, value: str, steps: tuple[_Step, ...]) -> str:
        original = value
        for step in steps:
            if step.wanted(value):
                value = step.apply(value)
        return original if value == original else value

    def _walk(self, value: Any, steps: tuple[_Step, ...]) -> Any:
        if isinstance(value, str):
            return value if len(value) < self._shortest else self._apply(value, steps)
        if isinstance(value, dict):
            out: dict[str, Any] | None = None
            for key, item in value.items():
                new = self._walk(item, steps)
                if new is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = new
            return value if out is None else out
        if isinstance(value, list):
            items: list[Any] | None = None
            for index, item in enumerate(value):
                new = self._walk(item, steps)
                if new is not item:
                    if items is None:
                        items = list(value)
                    items[index] = new
            return value if items is None else items
        return value


def secret_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The daemon's own secret variables (by name) and their values."""
    return {
        name: value
        for name, value in env.items()
        if SECRET_ENV_NAME.search(name.upper()) and len(value) >= MIN_SECRET_LENGTH
    }


def build_redactor(config: RedactionConfig | None, env: Mapping[str, str]) -> Redactor | None:
    """The redactor ``daemon.redaction`` asks for; ``None`` when it is turned off."""
    config = config or RedactionConfig()
    if not config.enabled:
        return None
    custom = [Shape(p.name, p.regex) for p in config.patterns]
    secrets = secret_environment(env) if config.environment else {}
    return Redactor([*BUILTIN, *custom], secrets)
