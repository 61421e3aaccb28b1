"""``--image FILE`` (the kind from the file's bytes, a size bound) and ``logs --since``."""

from __future__ import annotations

import argparse
import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from paseo.cli.commands._images import MAX_ENCODED, load_images
from paseo.cli.commands.logs import parse_since
from paseo.cli.errors import CliError

KINDS = {
    b"\x89PNG\r\n\x1a\n....": "image/png",
    b"\xff\xd8\xff\xe0....": "image/jpeg",
    b"GIF89a....": "image/gif",
    b"RIFF\x00\x00\x00\x00WEBPVP8 ": "image/webp",
}


def test_image_kinds_come_from_the_bytes(tmp_path: Path) -> None:
    paths = []
    for number, (head, _) in enumerate(KINDS.items()):
        path = tmp_path / f"picture-{number}.txt"  # the name says nothing
        path.write_bytes(head)
        paths.append(str(path))
    images = load_images(paths)
    assert [image["mediaType"] for image in images] == list(KINDS.values())
    assert base64.b64decode(images[0]["data"]) == next(iter(KINDS))
    assert load_images(None) == []


def test_bad_images_are_usage_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.png"
    text.write_text("not an image")
    with pytest.raises(CliError, match="not a PNG, JPEG, GIF or WebP image") as caught:
        load_images([str(text)])
    assert caught.value.exit_code == 2
    with pytest.raises(CliError, match="No such file"):
        load_images([str(tmp_path / "missing.png")])
    big = tmp_path / "big.png"
    big.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(MAX_ENCODED))
    with pytest.raises(CliError, match="too large to send"):
        load_images([str(big)])


def test_since_a_duration_or_a_time() -> None:
    before = datetime.now(UTC)
    since = parse_since("10m")
    after = datetime.now(UTC)
    assert before - timedelta(minutes=10) <= since <= after - timedelta(minutes=10)
    assert parse_since("2026-05-01T09:30:00+02:00") == datetime(2026, 5, 1, 7, 30, tzinfo=UTC)
    assert parse_since("2026-05-01T09:30").tzinfo is not None
    with pytest.raises(argparse.ArgumentTypeError, match="not a duration or a time"):
        parse_since("last week")
