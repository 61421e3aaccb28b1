"""Terminal profiles (a named command a client offers when it opens a terminal) and key names.

The user lists their own in ``daemon.terminalProfiles`` of ``config.json``; when that key is
absent, each installed agent provider offers the profile that starts its agent program (for
example ``claude`` with the typed prompt as its argument). Both are this model, so a provider
builds exactly what a user would write::

    from paseo_hookspecs.terminals import PROMPT_SENTINEL, TerminalProfile

    TerminalProfile(id="claude", name="Claude Code", command="claude", args=[PROMPT_SENTINEL])
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

PROMPT_SENTINEL = "{{{prompt}}}"
"""Where a typed prompt goes in a profile's ``command`` or ``args``. An ``args`` entry holding
it is dropped whole when no prompt is typed, so an option such as ``--prompt={{{prompt}}}``
belongs in one entry."""


class TerminalProfile(BaseModel):
    """A named command offered when opening a terminal (``daemon.terminalProfiles[]``)."""

    # The shape of config.json: unknown keys are refused and values are not coerced.
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    id: Annotated[str, StringConstraints(min_length=1)]
    name: Annotated[str, StringConstraints(min_length=1)]
    """What a client shows."""
    command: str
    args: list[str] | None = None
    icon: str | None = None
    """An icon name a client may know (``claude``, ``codex``, …)."""


KEYS: dict[str, str] = {
    "Enter": "\r",
    "Tab": "\t",
    "BTab": "\x1b[Z",
    "Escape": "\x1b",
    "Esc": "\x1b",
    "Space": " ",
    "BSpace": "\x7f",
    "Backspace": "\x7f",
    "Up": "\x1b[A",
    "Down": "\x1b[B",
    "Right": "\x1b[C",
    "Left": "\x1b[D",
    "Home": "\x1b[H",
    "End": "\x1b[F",
    "PageUp": "\x1b[5~",
    "PPage": "\x1b[5~",
    "PageDown": "\x1b[6~",
    "NPage": "\x1b[6~",
    "Delete": "\x1b[3~",
    "DC": "\x1b[3~",
    "Insert": "\x1b[2~",
    "IC": "\x1b[2~",
}
"""Named keys and the bytes an xterm sends for them."""

_CONTROL_SYMBOLS = {"@": 0, "[": 27, "\\": 28, "]": 29, "^": 30, "_": 31, "?": 127, " ": 0}


def key_bytes(token: str) -> str:
    """What typing ``token`` sends: a named key, ``C-x`` (control), ``M-x`` (escape prefix),
    or the token itself as literal text."""
    if token in KEYS:
        return KEYS[token]
    if len(token) > 2 and token[:2] == "M-":
        return "\x1b" + key_bytes(token[2:])
    if len(token) == 3 and token[:2] == "C-":
        char = token[2]
        if char.isalpha():
            return chr(ord(char.lower()) & 0x1F)
        if char in _CONTROL_SYMBOLS:
            return chr(_CONTROL_SYMBOLS[char])
    return token


def encode_keys(tokens: list[str], *, literal: bool) -> str:
    """What typing ``tokens`` in order sends (tmux's ``send-keys``: each a key name, ``C-x``,
    ``M-x`` or literal text, no separators); ``literal`` sends them all as text."""
    return "".join(tokens) if literal else "".join(key_bytes(t) for t in tokens)


__all__ = ["KEYS", "PROMPT_SENTINEL", "TerminalProfile", "encode_keys", "key_bytes"]
