"""``paseo speech …``: the speech engines, one-shot transcription and synthesis.

``say`` writes its audio with ``--out FILE`` (``-o`` is the global output-format flag).
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path
from typing import Any

from paseo.cli.errors import CliError
from paseo.cli.files import read_named_file
from paseo.cli.output import emit

PCM_DEFAULT = "audio/pcm;rate=16000;channels=1"

# Leading bytes -> MIME type, for files given without --format.
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"RIFF", "audio/wav"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
    (b"ID3", "audio/mpeg"),
    (b"\xff\xfb", "audio/mpeg"),
    (b"\x1a\x45\xdf\xa3", "audio/webm"),
)


SNIFF_BYTES = 4096
"""How much of the input :func:`sniff` looks at."""

# Files that are certainly not audio, recognised by their first bytes.
_NOT_AUDIO: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x1f\x8b", "a gzip file"),
    (b"\x7fELF", "a program"),
)


def sniff(head: bytes, given: str | None) -> str:
    """The MIME type of audio starting with ``head`` (pass at least the first 4 KiB):
    ``given`` when set, else by its magic bytes, else raw 16 kHz mono PCM — unless ``head`` is
    empty, text, or a known non-audio file, which is refused (once, it was "transcribed" to an
    empty text with exit status 0)."""
    if given:
        return given
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            return mime
    what = _not_audio(head)
    if what is not None:
        raise CliError(
            f"the input is {what}, not audio: give a WAV, OGG, FLAC, MP3 or WebM file, or raw "
            f"PCM with --format '{PCM_DEFAULT}'",
            exit_code=2,
        )
    return PCM_DEFAULT


def _not_audio(head: bytes) -> str | None:
    if not head:
        return "empty"
    for magic, kind in _NOT_AUDIO:
        if head.startswith(magic):
            return kind
    # Raw PCM has zero bytes (silence, small samples) and is rarely valid UTF-8; text has
    # neither property the other way round.
    if b"\0" not in head:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 4:  # not just a character cut at the end
                return None
        return "text"
    return None


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        metavar="MIME",
        help=f"audio type (default: from the file's header; headerless audio is {PCM_DEFAULT})",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    engines = subs.add_parser("engines", help="installed engines and the one each site uses")
    engines.set_defaults(run=run_engines)
    transcribe = subs.add_parser("transcribe", help="print the transcript of an audio file")
    transcribe.add_argument("file", help="an audio file, or - for stdin")
    add_format(transcribe)
    transcribe.add_argument("--language", help="e.g. en (default: the site's)")
    transcribe.add_argument(
        "--site",
        choices=("dictation", "voiceMode"),
        default="dictation",
        help="whose speech-to-text settings to use (default: dictation)",
    )
    transcribe.add_argument("--engine", help="a driver name instead of the site's provider")
    transcribe.set_defaults(run=run_transcribe)
    say = subs.add_parser("say", help="speak TEXT into an audio file (voice-mode TTS)")
    say.add_argument("text", nargs="+")
    # Not --out: argparse would take it for an abbreviation of the global --output.
    say.add_argument(
        "--save", required=True, metavar="FILE", help="where to write the audio (- for stdout)"
    )
    say.add_argument("--voice", help="an engine voice (default: the site's)")
    say.add_argument("--engine", help="a driver name instead of the site's provider")
    say.set_defaults(run=run_say)
    for sub in (engines, transcribe, say):
        sub.add_argument("--host", help="daemon address (default: this home's)")


def _call(args: argparse.Namespace, method: str, params: dict[str, Any] | None = None) -> Any:
    from paseo.cli.commands.project import call_daemon

    return call_daemon(args, method, params)


MAX_AUDIO_FILE_BYTES = 64 * 1024 * 1024
"""As the daemon's ``paseo.speech.dictation.MAX_AUDIO_BYTES``: more is refused there anyway."""


def read_input(name: str) -> bytes:
    """The bytes of file ``name`` (``-``: stdin)."""
    if name == "-":
        data = sys.stdin.buffer.read(MAX_AUDIO_FILE_BYTES + 1)
        if len(data) > MAX_AUDIO_FILE_BYTES:
            raise CliError(f"the audio on stdin is larger than {MAX_AUDIO_FILE_BYTES} bytes")
        return data
    return read_named_file(name, what="audio file", limit=MAX_AUDIO_FILE_BYTES)


def run_engines(args: argparse.Namespace) -> int:
    result = _call(args, "speech.engines")
    if getattr(args, "output", "table") != "table":
        emit(args, result)
        return 0

    def used_by(role: str, name: str) -> str:
        return ", ".join(
            path
            for path, provider in result["sites"].items()
            if provider == name and path.endswith(".tts") == (role == "tts")
        )

    rows = [
        {**engine, "role": role, "usedBy": used_by(role, engine["name"])}
        for role in ("stt", "tts")
        for engine in result[role]
    ]
    columns = [("role", "ROLE"), ("name", "ENGINE"), ("distribution", "FROM")]
    columns += [("usedBy", "USED BY")]
    if any(row.get("unavailable") for row in rows):
        columns += [("unavailable", "UNAVAILABLE")]
    emit(args, rows, columns=columns, id_key="name")
    return 0


INLINE_LIMIT = 1 << 20
"""Larger audio goes as a dictation: one request must fit the daemon's 2 MiB frame limit once
base64-encoded."""


def _transcribe_in_chunks(args: argparse.Namespace, audio: bytes, mime_type: str) -> Any:
    import asyncio
    from collections.abc import AsyncIterator

    from paseo.cli.context import home_layout
    from paseo.client import PaseoClient
    from paseo.speech.stream import CHUNK_BYTES, dictate

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(audio), CHUNK_BYTES * 8):
            yield audio[start : start + CHUNK_BYTES * 8]

    async def run() -> dict[str, Any]:
        async with PaseoClient(
            getattr(args, "host", None), home=home_layout(args).root, client_type="cli"
        ) as client:
            final = await dictate(client, chunks(), mime_type=mime_type, language=args.language)
            return {"text": final["text"], "engine": final["engine"]}

    return asyncio.run(run())


def run_transcribe(args: argparse.Namespace) -> int:
    audio = read_input(args.file)
    mime_type = sniff(audio[:SNIFF_BYTES], args.format)
    if len(audio) > INLINE_LIMIT and args.site == "dictation" and not args.engine:
        result = _transcribe_in_chunks(args, audio, mime_type)
    else:
        result = _call(args, "speech.transcribe", _transcribe_params(args, audio, mime_type))
    if getattr(args, "output", "table") == "table":
        sys.stdout.write(result["text"] + "\n")
    else:
        emit(args, result)
    return 0


def _transcribe_params(args: argparse.Namespace, audio: bytes, mime_type: str) -> dict[str, Any]:
    params: dict[str, Any] = {
        "audio": base64.b64encode(audio).decode("ascii"),
        "mimeType": mime_type,
        "site": args.site,
    }
    if args.language:
        params["language"] = args.language
    if args.engine:
        params["engine"] = args.engine
    return params


def run_say(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"text": " ".join(args.text)}
    if args.voice:
        params["voice"] = args.voice
    if args.engine:
        params["engine"] = args.engine
    result = _call(args, "speech.synthesize", params)
    audio = base64.b64decode(result["audio"])
    if args.save == "-":
        sys.stdout.buffer.write(audio)
        return 0
    out = Path(args.save)
    try:
        out.write_bytes(audio)
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror}") from None
    summary = {
        "file": str(out),
        "bytes": len(audio),
        "mimeType": result["mimeType"],
        "engine": result["engine"],
    }
    if getattr(args, "output", "table") == "table":
        if not getattr(args, "quiet", False):
            sys.stdout.write(f"wrote {len(audio)} bytes of {result['mimeType']} to {out}\n")
    else:
        emit(args, summary, id_key="file")
    return 0
