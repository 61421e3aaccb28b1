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
import contextlib
import io
import sys
import wave
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any

from paseo_hookspecs.errors import NotFound, PaseoError, Unavailable

from paseo.cli.errors import CliError
from paseo.cli.files import open_named_file
from paseo.cli.output import emit

CHUNK_SECONDS = 1.0
DEFAULT_TIMEOUT = 300.0
MAX_KEPT = 120
"""Chunks (seconds) kept to send again after a daemon restart."""
MAX_RESUMES = 8
"""Times one chunk is sent again after its session was lost before the command gives up."""


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
        self.earlier: list[dict[str, Any]] = []
        """Transcripts of the sessions before a daemon restart."""

    def reset(self) -> None:
        """A new session replaces one a restart ended: its transcripts are kept aside."""
        self.earlier += self.transcripts
        self.transcripts = []
        self.errors = []

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


class Link:
    """The voice session on the daemon, kept across lost connections.

    The client reconnects by itself (a bounded number of times, saying so on stderr). The same
    daemon still holds the session: it is resumed (``voice.start {voiceId}``) and the chunks it
    did not store are sent again. After a restart the session is gone: a new one is started and
    the audio from the end of the last transcribed utterance on is sent again (at most
    :data:`MAX_KEPT` seconds), so no utterance is heard twice and none that was not transcribed
    is lost.
    """

    def __init__(self, client: Any, params: dict[str, Any], talk: Conversation) -> None:
        self.client = client
        self.params = params
        self.talk = talk
        self.seq = 0
        self.utterances = 0
        """Utterances the current session heard (its last ack)."""
        self.heard_before = 0
        """Transcripts (and errors) of earlier sessions, lost with their daemon."""
        self.kept: list[tuple[int, bytes]] = []
        """Chunks sent since the end of the last transcribed utterance, in case they must be
        sent again (at most :data:`MAX_KEPT`)."""
        self.cuts: dict[int, int] = {}
        """Utterance number → the seq of the chunk it ended in."""

    async def start(self) -> Any:
        state = await self.client.call("voice.start", self.params, timeout=120)
        self.talk.voice_id = str(state["voiceId"])
        return state

    async def send(self, chunk: bytes, *, end: bool = False) -> Any:
        """Send one chunk (``end``: the last one); its ack."""
        self.seq += 1
        for _attempt in range(MAX_RESUMES):
            seq = self.seq
            try:
                ack = await self._audio(seq, chunk, end)
            except (Unavailable, NotFound):
                # Lost on the way (Unavailable), or the client already reconnected to a
                # restarted daemon that never heard of the session (NotFound). The same seq
                # again: a chunk the daemon stored before the answer was lost is a duplicate
                # it ignores. A new session numbers the chunks afresh.
                with contextlib.suppress(Unavailable):  # lost again: the next turn retries
                    if await self._resume():
                        self.seq += 1
                continue
            self.kept.append((seq, chunk))
            self._note(seq, ack)
            return ack
        raise CliError(f"the daemon kept failing voice mode ({MAX_RESUMES} tries); gave up")

    async def _audio(self, seq: int, chunk: bytes, end: bool) -> Any:
        audio = base64.b64encode(chunk).decode()
        body = {"voiceId": self.talk.voice_id, "seq": seq, "audio": audio}
        return await self.client.call("voice.audio", {**body, "endOfTurn": end} if end else body)

    def _note(self, seq: int, ack: Any) -> None:
        heard = int(ack["utterances"])
        for number in range(self.utterances + 1, heard + 1):
            self.cuts[number] = seq  # utterance ``number`` ended in this chunk
        self.utterances = heard
        # What came before the end of the last transcribed utterance is never sent again.
        cut = self.cuts.get(len(self.talk.transcripts) + len(self.talk.errors), 0)
        self.kept = [(n, c) for n, c in self.kept if n >= cut][-MAX_KEPT:]

    async def _resume(self) -> bool:
        """Get the session back after a lost connection; True when it is a new one."""
        if self.client.lost:
            raise CliError(
                "the connection to the daemon was lost and did not come back; is it running? "
                "(`paseo daemon status`)"
            )
        try:
            state = await self.client.call("voice.start", {"voiceId": self.talk.voice_id})
        except NotFound:
            # A restarted daemon: the session and what it had not transcribed are gone.
            self.heard_before += len(self.talk.transcripts) + len(self.talk.errors)
            self.talk.reset()
            await self.start()
            self.kept = [(n, chunk) for n, (_seq, chunk) in enumerate(self.kept, 1)]
            self.seq, self.utterances, self.cuts = len(self.kept), 0, {}
            for seq, chunk in list(self.kept):
                self._note(seq, await self._audio(seq, chunk, False))
            return True
        for seq, chunk in self.kept:
            if seq > int(state["ackedSeq"]):
                await self._audio(seq, chunk, False)
        return False

    @property
    def heard(self) -> int:
        return self.heard_before + self.utterances

    @property
    def answered(self) -> int:
        return self.heard_before + len(self.talk.transcripts) + len(self.talk.errors)


async def _converse(args: argparse.Namespace, source: IO[bytes]) -> dict[str, Any]:
    from paseo.cli.commands._agentcli import RECONNECTS, say_reconnecting
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
        getattr(args, "host", None),
        home=home_layout(args).root,
        client_type="cli",
        max_reconnects=RECONNECTS,
        on_reconnecting=say_reconnecting,
    ) as client:
        talk = Conversation("")
        link = Link(client, params, talk)
        state = await link.start()
        talk.show = getattr(args, "output", "table") == "table" and not getattr(
            args, "quiet", False
        )
        removers = [
            client.on(m, talk.on) for m in ("voice.transcript", "voice.output", "voice.error")
        ]
        try:
            return await _run(client, args, audio, link, state)
        except (asyncio.CancelledError, KeyboardInterrupt):
            with contextlib.suppress(PaseoError):
                await client.call("voice.abort", {"voiceId": talk.voice_id})
            raise
        finally:
            for remove in removers:
                remove()
            with contextlib.suppress(PaseoError):
                await client.call("voice.stop", {"voiceId": talk.voice_id})


async def _run(
    client: Any, args: argparse.Namespace, audio: Input, link: Link, state: Any
) -> dict[str, Any]:
    talk = link.talk
    async for chunk in audio.chunks():
        await link.send(chunk)
    await link.send(b"", end=True)
    heard = link.heard
    if heard == 0:
        raise CliError(f"heard no speech in {args.file}")
    await talk.until(lambda: link.answered >= heard, args.timeout, "the transcripts")
    if not any(t.get("prompted") for t in talk.transcripts + talk.earlier):
        if talk.errors:
            first = talk.errors[0]
            raise CliError(f"voice mode failed: {first.get('message')} ({first.get('code')})")
        raise CliError(
            f"heard {heard} utterance(s) but recognised no words; check "
            "features.voiceMode.stt (a grammar model recognises only its phrases)"
        )
    waited = await _wait(client, state["agentId"], args.timeout)
    transcripts = talk.earlier + talk.transcripts
    return {
        "voiceId": talk.voice_id,
        "agentId": state["agentId"],
        "transcripts": [
            {"utterance": t["utterance"], "text": t["text"], "prompted": t["prompted"]}
            for t in transcripts
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


async def _wait(client: Any, agent_id: str, seconds: float) -> Any:
    """``agent.wait``, asked again after a reconnect (a restart ends the turn it waited on)."""
    while True:
        try:
            return await client.call(
                "agent.wait",
                {"agentId": agent_id, "timeout": min(seconds, 600)},
                timeout=seconds + 10,
            )
        except Unavailable:
            if client.lost:
                raise


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
