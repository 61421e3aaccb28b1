"""Strings from the Hub made safe to store, log and print.

A Hub names things this daemon shows the user (the slug, scopes, refusal reasons, close
reasons). Printed raw, an escape sequence in one of them retitles or clears the user's terminal
and a megabyte of it floods the screen, so every remote string passes :func:`printable` before
it is kept and again before it is printed (a file written by an older version may hold one).
"""

from __future__ import annotations

from collections.abc import Iterable

LIMIT = 160
"""Longest remote string kept or shown; a real slug, scope or reason is far shorter."""
MAX_ITEMS = 32
"""Most entries of a remote list kept (a real Hub grants one or two scopes)."""


def printable(text: str, limit: int = LIMIT) -> str:
    """``text`` on one line of printable characters, at most ``limit`` long (cut with ``…``).

    Control characters (C0, C1, DEL), format characters (bidirectional overrides, zero-width)
    and line or paragraph separators are not printable: each becomes a space, so an escape
    sequence's remains are visible as text and never act on the terminal.
    """
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text[: limit * 4]).strip()
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 1].rstrip() + "…"


def printable_list(items: Iterable[str], limit: int = LIMIT) -> list[str]:
    """The first :data:`MAX_ITEMS` of ``items``, each :func:`printable`."""
    kept: list[str] = []
    for item in items:
        if len(kept) == MAX_ITEMS:
            break
        kept.append(printable(item, limit))
    return kept
