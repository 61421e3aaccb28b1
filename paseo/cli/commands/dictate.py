"""``paseo dictate [FILE|-]``: stream audio through the daemon's dictation, print the text.

Audio is sent in one-second chunks as it is read (stdin is read as it arrives), each chunk
acknowledged by the daemon; a dropped connection is resumed from the last acknowledged chunk.
Partial transcripts are printed as they come (to stderr, so stdout holds only the final text),
then the final transcript.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import AsyncIterator
from typing import IO, Any

from paseo.cli.commands.speech import SNIFF_BYTES, add_format, sniff
from paseo.cli.files import open_named_file
from paseo.cli.output import emit


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", default="-", help="an audio file, or - (stdin)")
    add_format(parser)
    parser.add_argument("--language", help="e.g. en (default: features.dictation.stt's)")
    parser.add_argument("--no-partials", action="store_true", help="print only the final text")
    parser.add_argument("--host", help="daemon address (default: this home's)")
    parser.set_defaults(run=run)


async def _chunks(source: IO[bytes], first: bytes, size: int) -> AsyncIterator[bytes]:
    if first:
        yield first
    while True:
        data = await asyncio.to_thread(source.read, size)
        if not data:
            return
        yield data


async def _dictate(args: argparse.Namespace, source: IO[bytes]) -> dict[str, Any]:
    from paseo.cli.context import home_layout
    from paseo.client import PaseoClient
    from paseo.speech.stream import CHUNK_BYTES, dictate

    # The header decides the format; it travels in the first chunk.
    first = await asyncio.to_thread(source.read, CHUNK_BYTES)
    mime_type = sniff(first[:SNIFF_BYTES], args.format)
    show = not (args.no_partials or getattr(args, "quiet", False))

    def partial(text: str) -> None:
        if show and text:
            sys.stderr.write(f"… {text}\n")
            sys.stderr.flush()

    async with PaseoClient(
        getattr(args, "host", None), home=home_layout(args).root, client_type="cli"
    ) as client:
        return await dictate(
            client,
            _chunks(source, first, CHUNK_BYTES),
            mime_type=mime_type,
            language=args.language,
            on_partial=None if args.no_partials else partial,
        )


def run(args: argparse.Namespace) -> int:
    if args.file == "-":
        result = asyncio.run(_dictate(args, sys.stdin.buffer))
    else:
        # A regular file only: a device (/dev/zero) would stream for ever.
        source = open_named_file(args.file, what="audio file")
        with source:
            result = asyncio.run(_dictate(args, source))
    if getattr(args, "output", "table") == "table":
        sys.stdout.write(result["text"] + "\n")
    else:
        emit(args, result, id_key="dictationId")
    return 0
