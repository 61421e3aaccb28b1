"""``--image FILE`` of ``paseo run`` and ``paseo send``: image files as prompt attachments.

The kind is read from the file's first bytes (PNG, JPEG, GIF, WebP: what model APIs take), not
from its name. Images travel base64-encoded inside the prompt's RPC frame, whose size the
daemon's WebSocket transport bounds (``maxFrameBytes``, 2 MiB by default), so the CLI refuses a
set that would not fit rather than have the connection dropped.
"""

from __future__ import annotations

import argparse
import base64
from typing import Any

from paseo.cli.errors import EXIT_USAGE, CliError
from paseo.cli.files import read_named_file

MAX_ENCODED = 1_900_000
"""Base64 bytes of all images of one prompt: under the default 2 MiB frame, with room for the
rest of the request."""
MAX_IMAGE_BYTES = MAX_ENCODED // 4 * 3
"""The largest image file: one that alone fills :data:`MAX_ENCODED` once encoded."""

_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def add_image_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--image",
        action="append",
        metavar="FILE",
        help="attach a PNG, JPEG, GIF or WebP image (repeatable; providers whose program "
        "takes images)",
    )


def _media_type(head: bytes) -> str | None:
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _SIGNATURES if head.startswith(magic)), None)


def load_images(paths: list[str] | None) -> list[dict[str, Any]]:
    """The ``images`` of an ``agent.create`` / ``agent.send`` request for ``paths``."""
    images: list[dict[str, Any]] = []
    total = 0
    for path in paths or []:
        # Checked (a regular file, not too big) before it is read: /dev/zero never ends.
        data = read_named_file(
            path, what="--image", limit=MAX_IMAGE_BYTES, advice=": too large to send"
        )
        kind = _media_type(data[:12])
        if kind is None:
            raise CliError(
                f"--image {path}: not a PNG, JPEG, GIF or WebP image", exit_code=EXIT_USAGE
            )
        encoded = base64.b64encode(data).decode("ascii")
        total += len(encoded)
        images.append({"mediaType": kind, "data": encoded})
    if total > MAX_ENCODED:
        raise CliError(
            f"the images are too large to send ({total} bytes once encoded, at most "
            f"{MAX_ENCODED}); send smaller or fewer images",
            exit_code=EXIT_USAGE,
        )
    return images
