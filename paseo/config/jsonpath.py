"""Dotted JSON paths into the raw config document: ``daemon.git.maxProcessConcurrency``.

Keys that are not plain identifiers (a plugin id with dots, say) are written in brackets,
``plugins["acme.tools"].enabled``, and list positions as ``[0]``. The same syntax is used in
error messages, warnings, ``paseo config get/set`` and ``envOverrides``, so a path printed by
one can be pasted into another.

Every function here is pure: documents are copied on write, never mutated in place.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

Segment = str | int
"""A dict key (``str``) or a list index (``int``)."""

_DECODER = json.JSONDecoder()
_PLAIN_KEY = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")


class PathError(ValueError):
    """A path that does not parse, or that cannot be walked in a document."""


def parse_path(path: str) -> tuple[Segment, ...]:
    """Split ``path`` into segments; the empty string is the document root."""
    segments: list[Segment] = []
    i, n = 0, len(path)
    expect_segment = bool(path)
    while i < n:
        char = path[i]
        if char == "[":
            end = path.find("]", i)
            if end == -1:
                raise PathError(f"unclosed '[' in path {path!r}")
            inner = path[i + 1 : end]
            if path.startswith('"', i + 1):
                # A JSON string, so a key may contain dots, brackets and escaped quotes.
                try:
                    key, after = _DECODER.raw_decode(path, i + 1)
                except ValueError as error:
                    raise PathError(f"bad quoted key in path {path!r}") from error
                if not path.startswith("]", after):
                    raise PathError(f"expected ']' after a quoted key in path {path!r}")
                segments.append(str(key))
                i = after + 1
            elif path.startswith("'", i + 1):
                close = path.find("']", i + 2)
                if close == -1:
                    raise PathError(f"unclosed quoted key in path {path!r}")
                segments.append(path[i + 2 : close])
                i = close + 2
            elif inner.isdigit():
                segments.append(int(inner))
                i = end + 1
            else:
                raise PathError(f"expected an index or a quoted key in path {path!r}")
            expect_segment = False
            if i < n and path[i] not in ".[":
                raise PathError(f"expected '.' or '[' after ']' in path {path!r}")
        elif char == ".":
            if expect_segment:
                raise PathError(f"empty segment in path {path!r}")
            expect_segment = True
            i += 1
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            segments.append(path[i:j])
            i = j
            expect_segment = False
    if expect_segment:
        raise PathError(f"path {path!r} ends with '.'")
    return tuple(segments)


def format_path(segments: Iterable[Segment]) -> str:
    """The inverse of :func:`parse_path`; the root is shown as ``(root)``."""
    out = ""
    for segment in segments:
        if isinstance(segment, int):
            out += f"[{segment}]"
        elif _PLAIN_KEY.match(segment):
            out += f".{segment}" if out else segment
        else:
            out += f"[{json.dumps(segment, ensure_ascii=False)}]"
    return out or "(root)"


def _as_segments(path: str | Iterable[Segment]) -> tuple[Segment, ...]:
    return parse_path(path) if isinstance(path, str) else tuple(path)


def _list_index(segment: Segment) -> int | None:
    # A dotted digit segment ("profiles.0") addresses a list just like "[0]".
    if isinstance(segment, int):
        return segment
    return int(segment) if segment.isdigit() else None


def get_path(data: Any, path: str | Iterable[Segment]) -> Any:
    """The value at ``path``; raises ``KeyError`` (naming the path) when it is absent."""
    segments = _as_segments(path)
    current = data
    for depth, segment in enumerate(segments):
        if isinstance(current, Mapping) and isinstance(segment, str) and segment in current:
            current = current[segment]
            continue
        if isinstance(current, list):
            index = _list_index(segment)
            if index is not None and 0 <= index < len(current):
                current = current[index]
                continue
        raise KeyError(format_path(segments[: depth + 1]))
    return current


def has_path(data: Any, path: str | Iterable[Segment]) -> bool:
    """Whether ``path`` exists in ``data``."""
    try:
        get_path(data, path)
    except KeyError:
        return False
    return True


def set_path_in(
    data: Mapping[str, Any], path: str | Iterable[Segment], value: Any
) -> dict[str, Any]:
    """A copy of ``data`` with ``value`` at ``path``; missing objects on the way are created.

    Only the containers along the path are copied; siblings are shared with the input, which
    is never modified.
    """
    segments = _as_segments(path)
    if not segments:
        if not isinstance(value, Mapping):
            raise PathError("the document root must be an object")
        return dict(value)
    result = _set(data, segments, value, ())
    assert isinstance(result, dict)
    return result


def _set(
    container: Any, segments: tuple[Segment, ...], value: Any, done: tuple[Segment, ...]
) -> Any:
    segment, rest = segments[0], segments[1:]
    here = (*done, segment)
    if isinstance(container, list):
        index = _list_index(segment)
        if index is None or not 0 <= index <= len(container):
            raise PathError(f"{format_path(here)}: no such list position")
        copy = list(container)
        child = copy[index] if index < len(copy) else None
        new_child = _set(_object_or_new(child, rest, here), rest, value, here) if rest else value
        if index == len(copy):
            copy.append(new_child)
        else:
            copy[index] = new_child
        return copy
    if not isinstance(container, Mapping):
        raise PathError(f"{format_path(done)}: not an object")
    key = str(segment)
    result = dict(container)
    if rest:
        result[key] = _set(_object_or_new(result.get(key), rest, here), rest, value, here)
    else:
        result[key] = value
    return result


def _object_or_new(child: Any, rest: tuple[Segment, ...], here: tuple[Segment, ...]) -> Any:
    if child is None:
        return {}
    if isinstance(child, Mapping | list):
        return child
    raise PathError(f"{format_path(here)}: is a {type(child).__name__}, not an object")


def delete_path_in(data: Mapping[str, Any], path: str | Iterable[Segment]) -> dict[str, Any]:
    """A copy of ``data`` without ``path``; objects left empty by the removal are pruned too.

    Deleting an absent path returns an unchanged copy.
    """
    segments = _as_segments(path)
    if not segments or not has_path(data, segments):
        return dict(data)
    result = _delete(data, segments)
    return result if isinstance(result, dict) else {}


def _delete(container: Any, segments: tuple[Segment, ...]) -> Any:
    segment, rest = segments[0], segments[1:]
    if isinstance(container, list):
        index = _list_index(segment)
        assert index is not None
        copy = list(container)
        if rest:
            copy[index] = _delete(copy[index], rest)
        else:
            del copy[index]
        return copy
    key = str(segment)
    result = dict(container)
    if rest:
        child = _delete(result[key], rest)
        # An object emptied by the deletion carried nothing but the deleted key; dropping it
        # keeps the file to what the user actually set.
        if isinstance(child, dict) and not child:
            del result[key]
        else:
            result[key] = child
    else:
        del result[key]
    return result
