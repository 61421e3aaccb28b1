"""``paseo voice AGENT [FILE|-]``: talk to an agent by voice; hear (or save) what it says.

The audio (a WAV file, or raw 16-bit PCM: ``--format audio/pcm;rate=…;channels=…``, 16 kHz
mono by default) streams to the daemon's voice mode in one-second chunks as it is read; the
daemon cuts it into utterances, transcribes each and prompts the agent, which answers with its
``speak`` tool. The end of the input ends the last utterance. The command then waits for the
agent's turn to end, and prints what it said (``-o json``: everything, transcripts included)
and, with ``--save``, writes the spoken replies as WAV: into a directory one file per reply
(``reply-1.wav`` …), or all of them into one file. Ctrl-C aborts: the speech and the agent's
turn are cut off.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import sys
import wave
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any

from paseo_hookspecs.errors import PaseoError

from paseo.cli.errors import CliError
from paseo.cli.files import open_named_file
from paseo.cli.output import emit

CHUNK_SECONDS = 1.0
DEFAULT_TIMEOUT = 300.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", help="the agent to talk to (id, prefix or title)")
    parser.add_argument("file", nargs="?", default="-", help="a WAV or raw PCM file, or - (stdin)")
    parser.add_argument(
        "--format",
        metavar="MIME",
        help="raw input's PCM format (default: from a WAV header, else "
        "audio/pcm;rate=16000;channels=1)",
    )
    parser.add_argument(
        "--save",
        metavar="PATH",
        help="write the spoken replies as WAV: a directory (one file per reply) or one file",
    )
    parser.add_argument("--instructions", help="what follows each utterance in the prompt")
    parser.add_argument(
        "--silence-ms", type=int, default=800, help="silence that ends an utterance (ms)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for the agent's answer (default {DEFAULT_TIMEOUT:.0f})",
    )
    parser.add_argument("--host", help="daemon address (default: this home's)")
    parser.set_defaults(run=run)


class Input:
    """The audio to send: its PCM MIME type and its bytes as they are read."""

    def __init__(self, source: IO[bytes], given: str | None) -> None:
        self._source = source
        self._given = given
        self.mime_type = given or "audio/pcm;rate=16000;channels=1"
        self._head = b""
        self._chunk = 32000

    async def open(self) -> None:
        head = await asyncio.to_thread(self._source.read, 12)
        if head.startswith(b"RIFF") and self._given is None:
            # A WAV's header says its format; a streamed one's sizes are placeholders, so it
            # is read whole and repaired.
            from paseo.speech.audio import repair_wav

            data = head + await asyncio.to_thread(self._source.read)
            try:
                with wave.open(io.BytesIO(repair_wav(data))) as reader:
                    rate, channels, width = (
                        reader.getframerate(),
                        reader.getnchannels(),
                        reader.getsampwidth(),
                    )
                    self._head = reader.readframes(reader.getnframes())
            except (wave.Error, EOFError, PaseoError) as exc:
                raise CliError(f"not a PCM WAV file: {exc}") from None
            if width != 2:
                raise CliError(
                    f"voice mode takes 16-bit PCM, not {8 * width}-bit; convert it first "
                    "(sox in.wav -b 16 out.wav)"
                )
            self.mime_type = f"audio/pcm;rate={rate};channels={channels}"
            self._source = io.BytesIO(b"")
        elif head[:4] in (b"OggS", b"fLaC", b"\x1a\x45\xdf\xa3") or head.startswith(b"ID3"):
            raise CliError(
                "voice mode takes WAV or raw 16-bit PCM; convert it first "
                "(sox in.ogg -r 16000 -c 1 -b 16 out.wav)"
            )
        else:
            self._head = head
        from paseo.speech.audio import parse_mime

        params = parse_mime(self.mime_type)[1]
        try:
            rate, channels = int(params.get("rate", 16000)), int(params.get("channels", 1))
        except ValueError:
            raise CliError(f"bad PCM format {self.mime_type!r}") from None
        self._chunk = max(2, int(rate * channels * 2 * CHUNK_SECONDS))

    async def chunks(self) -> AsyncIterator[bytes]:
        buffer = self._head
        while True:
            while len(buffer) >= self._chunk:
                yield buffer[: self._chunk]
                buffer = buffer[self._chunk :]
            data = await asyncio.to_thread(self._source.read, self._chunk)
            if not data:
                break
            buffer += data
        if buffer:
            yield buffer


class Conversation:
    """What the daemon said back during one run: transcripts, replies, errors."""

    def __init__(self, voice_id: str) -> None:
        self.voice_id = voice_id
        self.transcripts: list[dict[str, Any]] = []
        self.replies: dict[str, dict[str, Any]] = {}
        self.errors: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.show = True

    def on(self, method: str, event: dict[str, Any]) -> None:
        if event.get("voiceId") != self.voice_id:
            return
        if method == "voice.transcript":
            self.transcripts.append(event)
            if self.show and event.get("text"):
                sys.stderr.write(f"you: {event['text']}\n")
        elif method == "voice.output":
            reply = self.replies.setdefault(
                str(event["speechId"]),
                {"speechId": event["speechId"], "text": None, "audio": [], "mimeType": None},
            )
            if event.get("text") is not None:
                reply["text"] = event["text"]
            reply["mimeType"] = event.get("mimeType")
            reply["audio"].append(base64.b64decode(event.get("audio") or ""))
            reply["done"] = bool(event.get("final"))
            if self.show and reply["done"] and reply["text"]:
                sys.stderr.write(f"agent: {reply['text']}\n")
        elif method == "voice.error":
            self.errors.append(event)
            sys.stderr.write(f"paseo: voice: {event.get('message')} ({event.get('code')})\n")
        sys.stderr.flush()
        self.changed.set()

    async def until(self, done: Callable[[], bool], seconds: float, what: str) -> None:
        try:
            async with asyncio.timeout(seconds):
                while not done():
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise CliError(f"gave up after {seconds:.0f} s waiting for {what}") from None


async def _converse(args: argparse.Namespace, source: IO[bytes]) -> dict[str, Any]:
    from paseo.cli.context import home_layout
    from paseo.client import PaseoClient

    audio = Input(source, args.format)
    await audio.open()
    params: dict[str, Any] = {
        "agentId": args.agent,
        "mimeType": audio.mime_type,
        "silenceMs": args.silence_ms,
    }
    if args.instructions:
        params["instructions"] = args.instructions
    async with PaseoClient(
        getattr(args, "host", None), home=home_layout(args).root, client_type="cli"
    ) as client:
        state = await client.call("voice.start", params, timeout=120)
        talk = Conversation(str(state["voiceId"]))
        talk.show = getattr(args, "output", "table") == "table" and not getattr(
            args, "quiet", False
        )
        removers = [
            client.on(m, talk.on) for m in ("voice.transcript", "voice.output", "voice.error")
        ]
        try:
            return await _run(client, args, audio, talk, state)
        except (asyncio.CancelledError, KeyboardInterrupt):
            await client.call("voice.abort", {"voiceId": talk.voice_id})
            raise
        finally:
            for remove in removers:
                remove()
            await client.call("voice.stop", {"voiceId": talk.voice_id})


async def _run(
    client: Any, args: argparse.Namespace, audio: Input, talk: Conversation, state: Any
) -> dict[str, Any]:
    seq = 0
    async for chunk in audio.chunks():
        seq += 1
        await client.call(
            "voice.audio",
            {"voiceId": talk.voice_id, "seq": seq, "audio": base64.b64encode(chunk).decode()},
        )
    seq += 1
    ack = await client.call(
        "voice.audio", {"voiceId": talk.voice_id, "seq": seq, "audio": "", "endOfTurn": True}
    )
    heard = int(ack["utterances"])
    if heard == 0:
        raise CliError(f"heard no speech in {args.file}")
    await talk.until(
        lambda: len(talk.transcripts) + len(talk.errors) >= heard,
        args.timeout,
        "the transcripts",
    )
    if not any(t.get("prompted") for t in talk.transcripts):
        if talk.errors:
            first = talk.errors[0]
            raise CliError(f"voice mode failed: {first.get('message')} ({first.get('code')})")
        raise CliError(
            f"heard {heard} utterance(s) but recognised no words; check "
            "features.voiceMode.stt (a grammar model recognises only its phrases)"
        )
    waited = await client.call(
        "agent.wait",
        {"agentId": state["agentId"], "timeout": min(args.timeout, 600)},
        timeout=args.timeout + 10,
    )
    return {
        "voiceId": talk.voice_id,
        "agentId": state["agentId"],
        "transcripts": [
            {"utterance": t["utterance"], "text": t["text"], "prompted": t["prompted"]}
            for t in talk.transcripts
        ],
        "replies": [
            {
                "speechId": r["speechId"],
                "text": r["text"],
                "mimeType": r["mimeType"],
                "bytes": sum(len(piece) for piece in r["audio"]),
                "_audio": r["audio"],
            }
            for r in talk.replies.values()
        ],
        "outcome": waited["outcome"],
        "errors": [{"code": e.get("code"), "message": e.get("message")} for e in talk.errors],
    }


def _wav(pieces: list[bytes], mime_type: str | None) -> bytes:
    from paseo.speech.audio import parse_mime, pcm_to_wav

    base, params = parse_mime(mime_type or "")
    if base != "audio/pcm":
        raise CliError(f"cannot save {mime_type} replies as WAV")
    return pcm_to_wav(
        b"".join(pieces),
        rate=int(params.get("rate", 16000)),
        channels=int(params.get("channels", 1)),
    )


def _save(target: str, replies: list[dict[str, Any]]) -> list[str]:
    path = Path(target)
    try:
        if target.endswith("/") or path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            written = []
            for number, reply in enumerate(replies, 1):
                file = path / f"reply-{number}.wav"
                file.write_bytes(_wav(reply["_audio"], reply["mimeType"]))
                written.append(str(file))
            return written
        formats = {reply["mimeType"] for reply in replies}
        if len(formats) > 1:
            raise CliError(
                f"the replies differ in format ({', '.join(sorted(formats))}): "
                "save them to a directory"
            )
        pieces = [piece for reply in replies for piece in reply["_audio"]]
        path.write_bytes(_wav(pieces, replies[0]["mimeType"]))
        return [str(path)]
    except OSError as exc:
        raise CliError(f"cannot write {target}: {exc.strerror}") from None


def run(args: argparse.Namespace) -> int:
    if args.file == "-":
        result = asyncio.run(_converse(args, sys.stdin.buffer))
    else:
        # A regular file only: a device (/dev/zero) would stream for ever.
        source = open_named_file(args.file, what="audio file")
        with source:
            result = asyncio.run(_converse(args, source))
    replies = result["replies"]
    if args.save:
        if not replies:
            raise CliError("the agent said nothing (it did not call speak): nothing to save")
        result["files"] = _save(args.save, replies)
    for reply in replies:
        del reply["_audio"]
    if getattr(args, "output", "table") == "table":
        for reply in replies:
            sys.stdout.write(f"{reply['text']}\n")
    else:
        emit(args, result, id_key="voiceId")
    if not replies and not getattr(args, "quiet", False):
        sys.stderr.write("paseo: the agent's turn ended without speaking\n")
    return 0
