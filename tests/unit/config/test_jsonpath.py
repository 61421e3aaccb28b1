"""JSON paths: parsing, formatting and copy-on-write edits."""

from __future__ import annotations

import pytest

from paseo.config.jsonpath import (
    PathError,
    delete_path_in,
    format_path,
    get_path,
    parse_path,
    set_path_in,
)
from paseo.config.load import parse_size


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("", ()),
        ("daemon", ("daemon",)),
        ("daemon.git.maxProcessConcurrency", ("daemon", "git", "maxProcessConcurrency")),
        ('plugins["acme.tools"].enabled', ("plugins", "acme.tools", "enabled")),
        ("plugins['a.b']", ("plugins", "a.b")),
        ("daemon.terminalProfiles[2].name", ("daemon", "terminalProfiles", 2, "name")),
        ('x["with \\"quote\\" and ]"]', ("x", 'with "quote" and ]')),
        ('x["a\\"]b"].c', ("x", 'a"]b', "c")),
    ],
)
def test_parse(text: str, segments: tuple[str | int, ...]) -> None:
    assert parse_path(text) == segments
    if segments:
        assert parse_path(format_path(segments)) == segments


@pytest.mark.parametrize("text", ["a..b", "a.", ".a", "a[", "a[x]", 'a["b', 'a["b"', "a[0]b"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(PathError):
        parse_path(text)


def test_format() -> None:
    assert format_path(()) == "(root)"
    assert (
        format_path(("agents", "providers", "my-claude", "label"))
        == "agents.providers.my-claude.label"
    )
    assert format_path(("plugins", "a.b", 0)) == 'plugins["a.b"][0]'


def test_get() -> None:
    data = {"a": {"b": [10, {"c": None}]}}
    assert get_path(data, "a.b[0]") == 10
    assert get_path(data, "a.b.1.c") is None
    assert get_path(data, "") is data
    with pytest.raises(KeyError, match=r"a\.x"):
        get_path(data, "a.x.y")
    with pytest.raises(KeyError):
        get_path(data, "a.b[5]")


def test_set_copies_on_write() -> None:
    data = {"a": {"b": 1}, "z": {"k": 1}}
    new = set_path_in(data, "a.c.d", 2)
    assert new == {"a": {"b": 1, "c": {"d": 2}}, "z": {"k": 1}}
    assert data == {"a": {"b": 1}, "z": {"k": 1}}
    assert set_path_in({"l": [1, 2]}, "l[2]", 3) == {"l": [1, 2, 3]}
    with pytest.raises(PathError):
        set_path_in({"a": "text"}, "a.b", 1)
    with pytest.raises(PathError):
        set_path_in({"l": [1]}, "l[5]", 1)


def test_delete_prunes_emptied_objects() -> None:
    data = {"a": {"b": {"c": 1}}, "d": 1}
    assert delete_path_in(data, "a.b.c") == {"d": 1}
    assert data == {"a": {"b": {"c": 1}}, "d": 1}
    assert delete_path_in(data, "missing.key") == data
    assert delete_path_in({"l": [1, 2]}, "l[0]") == {"l": [2]}


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("10m", 10 * 1024**2),
        ("512k", 512 * 1024),
        ("2G", 2 * 1024**3),
        ("7", 7 * 1024**2),
        ("10MB", 10 * 1024**2),
        ("100b", 100),
        ("lots", 10 * 1024**2),
        ("0", 10 * 1024**2),
    ],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size
