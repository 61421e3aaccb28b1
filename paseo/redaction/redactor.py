"""The redactor: one combined pattern to decide quickly, the patterns in order to replace.

Most text holds no secret, so the hot path is one ``search`` of one combined regular expression
per string; only a string it matches is rewritten, pattern by pattern. :meth:`Redactor.data`
returns its argument itself when nothing matched, so callers tell "unchanged" by identity and
pay no copy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from paseo.redaction.patterns import BUILTIN, MIN_SECRET_LENGTH, SECRET_ENV_NAME
from paseo.redaction.settings import RedactionConfig


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _replacer(kind: str) -> Callable[[re.Match[str]], str]:
    text = marker(kind)

    def replace(match: re.Match[str]) -> str:
        # A first group is the part worth keeping (the variable name, "Bearer ").
        kept = match.group(1) if match.re.groups and match.group(1) else ""
        return kept + text

    return replace


class Redactor:
    """Replaces secrets in text and in JSON-shaped data."""

    def __init__(
        self,
        patterns: Iterable[tuple[str, str]],
        secrets: Mapping[str, str] | None = None,
    ) -> None:
        steps: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = []
        sources: list[str] = []
        # Exact values first: a known secret is named by its variable, whatever its shape.
        values = sorted(
            ((v, name) for name, v in (secrets or {}).items() if len(v) >= MIN_SECRET_LENGTH),
            key=lambda item: -len(item[0]),
        )
        for value, name in values:
            source = re.escape(value)
            steps.append((re.compile(source), _replacer(f"env:{name}")))
            sources.append(source)
        for kind, source in patterns:
            steps.append((re.compile(f"(?:{source})"), _replacer(kind)))
            sources.append(source)
        self._steps = steps
        self._check = re.compile("|".join(f"(?:{s})" for s in sources)) if sources else None

    def text(self, value: str) -> str:
        """``value`` with every secret replaced (the same object when there was none)."""
        check = self._check
        if check is None or check.search(value) is None:
            return value
        for pattern, replace in self._steps:
            value = pattern.sub(replace, value)
        return value

    def data(self, value: Any) -> Any:
        """JSON-shaped ``value`` with every string redacted; ``value`` itself if unchanged."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            out: dict[str, Any] | None = None
            for key, item in value.items():
                new = self.data(item)
                if new is not item:
                    if out is None:
                        out = dict(value)
                    out[key] = new
            return value if out is None else out
        if isinstance(value, list):
            items: list[Any] | None = None
            for index, item in enumerate(value):
                new = self.data(item)
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
    custom = [(p.name, p.regex) for p in config.patterns]
    secrets = secret_environment(env) if config.environment else {}
    return Redactor([*BUILTIN, *custom], secrets)
