"""Launch environment overrides: ``PASEO_*`` variables read into the effective configuration.

Values that do not parse are ignored, as if unset, so a typo in a launch script falls back to
the file instead of stopping the daemon; each one is remembered in :attr:`EnvOverrides.rejected`
so ``paseo config validate`` can name it. Every variable that decided a setting is recorded, so
``ResolvedConfig.envOverrides`` can say which config paths came from the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off")


class EnvOverrides:
    """Reads launch overrides and remembers which config paths they decided."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self.applied: dict[str, str] = {}
        self.rejected: dict[str, str] = {}
        """Variable -> what it should hold, for each set variable that did not parse."""

    def raw(self, name: str) -> str | None:
        """The trimmed value of ``name``; ``None`` when unset or blank."""
        value = self._env.get(name)
        if value is None or not value.strip():
            return None
        return value.strip()

    def record(self, path: str, name: str) -> None:
        """Note that variable ``name`` decided config ``path``."""
        self.applied[path] = name

    def text(self, path: str, *names: str) -> str | None:
        """The first non-empty variable of ``names``."""
        for name in names:
            value = self.raw(name)
            if value is not None:
                self.record(path, name)
                return value
        return None

    def reject(self, name: str, expected: str) -> None:
        """Note that variable ``name`` is set but ignored because it is not ``expected``."""
        self.rejected[name] = expected

    def boolean(self, path: str, name: str) -> bool | None:
        value = self.raw(name)
        parsed = parse_bool(value)
        if parsed is not None:
            self.record(path, name)
        elif value is not None:
            self.reject(name, "true or false (1/0, yes/no, on/off)")
        return parsed

    def positive_int(self, path: str, *names: str) -> int | None:
        for name in names:
            value = self.raw(name)
            parsed = parse_positive_int(value)
            if parsed is not None:
                self.record(path, name)
                return parsed
            if value is not None:
                self.reject(name, "a whole number above zero")
        return None

    def choice(self, path: str, choices: tuple[str, ...], *names: str) -> str | None:
        for name in names:
            value = self.raw(name)
            if value is not None and value.lower() in choices:
                self.record(path, name)
                return value.lower()
            if value is not None:
                self.reject(name, "one of " + ", ".join(choices))
        return None

    def string_list(self, path: str, *names: str) -> Literal[True] | list[str] | None:
        """A comma-separated list; ``true`` means "any"."""
        for name in names:
            value = self.raw(name)
            if value is None:
                continue
            self.record(path, name)
            if value.lower() == "true":
                return True
            return [item.strip() for item in value.split(",") if item.strip()]
        return None


def parse_bool(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.lower()
    if lowered in _TRUE_WORDS:
        return True
    if lowered in _FALSE_WORDS:
        return False
    return None


def parse_positive_int(value: str | None) -> int | None:
    """A whole number above zero (``"8"``, ``"8.0"``, ``"1e2"``); anything else is ignored."""
    if value is None or "_" in value:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if not number.is_integer() or number <= 0:
        return None
    return int(number)


def parse_port(value: str | None) -> int | None:
    parsed = parse_positive_int(value)
    return parsed if parsed is not None and parsed <= 65535 else None
