"""Speech work never holds the daemon: other clients are answered while audio is decoded.

The local decoders (pocketsphinx, Whisper's feature extraction) hold the interpreter lock for a
whole utterance, even from a thread, so they run in a worker process; dictation passes are one
at a time per dictation and bounded overall, and audio is assembled off the event loop. No
timing is asserted: the proof is structural (the decoder's process is another one; pings are
answered, counted, while a transcription is in flight), and every wait is bounded only as a
hang guard.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import psutil
import pytest
from helpers.daemon_rpc import LiveDaemon, answer, hello, open_ws, rpc
from paseo_speech_local.audio import to_pcm16k
from websockets.asyncio.client import ClientConnection

from .conftest import ESPEAK_VOICE

HANG_GUARD = 300.0
"""Seconds after which a scenario is a hang, not a slow machine."""

PING_PAUSE = 0.02
"""Seconds between two pings: pacing only (nothing is asserted about time)."""

PINGS_DURING = 10
"""Pings another client must have had answered while one transcription was in flight (a
liveness check; the proof is structural: the decoder's process is another one)."""


@pytest.fixture(scope="module")
def long_speech(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """About 7 s of speech (espeak-ng) as a WAV: its decode takes seconds."""
    binary = shutil.which("espeak-ng")
    if binary is None:
        pytest.fail("espeak-ng is not installed: run scripts/test (it installs it)")
    target = tmp_path_factory.mktemp("long") / "long.wav"
    text = " ".join(["close the window please and open the door now"] * 2)
    subprocess.run([binary, *ESPEAK_VOICE, "-w", str(target), text], check=True, timeout=60)
    return target.read_bytes()


async def _connect(live: LiveDaemon) -> ClientConnection:
    ws = await open_ws(live.url, live.credential, max_size=None, ping_interval=None)
    await hello(ws)
    return ws


async def _ping_until(ws: ClientConnection, done: asyncio.Future[Any]) -> int:
    """Ping until ``done`` (a pause between pings keeps under the connection's rate limit);
    how many pings were answered before it was."""
    answered = 0
    request_id = 1000
    while not done.done():
        request_id += 1
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "server.ping"}))
        reply = await answer(ws, request_id, HANG_GUARD)
        assert "result" in reply, reply
        if not done.done():
            answered += 1
        await asyncio.sleep(PING_PAUSE)
    return answered


DECODERS = ("pocketsphinx", "ctranslate2")
"""The libraries of the local decoders (the default engine's is CTranslate2, Whisper's)."""


def _holds_a_decoder(process: psutil.Process) -> bool:
    return any(name in m.path for m in process.memory_maps() for name in DECODERS)


def _decoder_processes(daemon_pid: int) -> list[psutil.Process]:
    """The daemon's child processes that hold a decoder library."""
    found = []
    for child in psutil.Process(daemon_pid).children(recursive=True):
        try:
            if _holds_a_decoder(child):
                found.append(child)
        except (psutil.Error, OSError):
            continue
    return found


def test_a_long_transcribe_runs_in_another_process_and_pings_are_answered_meanwhile(
    daemon_factory: Callable[..., LiveDaemon], long_speech: bytes, spoken: bytes
) -> None:
    live = daemon_factory({"features": {"dictation": {"stt": {"provider": "local"}}}})
    audio = base64.b64encode(long_speech).decode("ascii")

    async def scenario() -> tuple[dict[str, Any], int, int]:
        speaker, pinger = await _connect(live), await _connect(live)
        try:
            params = {"audio": audio, "mimeType": "audio/wav"}
            # Warm up: the first call starts the decoder process and loads the model.
            short = {"audio": base64.b64encode(spoken).decode("ascii"), "mimeType": "audio/wav"}
            await speaker.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 1, "method": "speech.transcribe", "params": short}
                )
            )
            warm = await answer(speaker, 1, HANG_GUARD)
            assert "result" in warm, warm
            await speaker.send(
                json.dumps(
                    {"jsonrpc": "2.0", "id": 2, "method": "speech.transcribe", "params": params}
                )
            )
            done: asyncio.Future[Any] = asyncio.ensure_future(answer(speaker, 2, HANG_GUARD))
            answered = await _ping_until(pinger, done)
            reply = await done
            return reply, answered, len(_decoder_processes(live.pid))
        finally:
            await speaker.close()
            await pinger.close()

    reply, answered, decoders = asyncio.run(asyncio.wait_for(scenario(), HANG_GUARD))
    assert "result" in reply, reply
    assert reply["result"]["text"], reply
    # The decoder lives in a process of its own, not in the daemon's.
    assert decoders >= 1
    assert not _holds_a_decoder(psutil.Process(live.pid)), "the daemon itself loaded a decoder"
    assert answered >= PINGS_DURING, f"only {answered} pings were answered during the decode"


def test_a_dictation_of_large_chunks_with_partials_leaves_the_daemon_answering(
    daemon_factory: Callable[..., LiveDaemon],
    local_config: dict[str, Any],
    spoken: bytes,
) -> None:
    """Four chunks of 40 s of speech each (2.5 MB of PCM in all), partials on: every chunk is
    acknowledged, partials arrive, the final is the phrase, and another client's pings are
    answered throughout."""
    live = daemon_factory(local_config)
    phrase = to_pcm16k(spoken, "audio/wav")
    pause = b"\x00\x00" * 8000  # 0.5 s between phrases
    chunk = (phrase + pause) * max(1, int(40 * 32000 / len(phrase + pause)))
    chunks = [chunk] * 4

    async def scenario() -> tuple[list[dict[str, Any]], dict[str, Any], int]:
        speaker, pinger = await _connect(live), await _connect(live)
        try:
            started = await rpc(speaker, 1, "dictation.start", {"partials": True})
            dictation_id = started["result"]["dictationId"]

            async def dictate() -> tuple[list[dict[str, Any]], dict[str, Any]]:
                partials: list[dict[str, Any]] = []
                for seq, data in enumerate(chunks, 1):
                    params = {
                        "dictationId": dictation_id,
                        "seq": seq,
                        "audio": base64.b64encode(data).decode("ascii"),
                    }
                    request = {"jsonrpc": "2.0", "id": 10 + seq, "method": "dictation.chunk"}
                    await speaker.send(json.dumps({**request, "params": params}))
                    async with asyncio.timeout(HANG_GUARD):
                        while True:
                            frame = json.loads(await speaker.recv())
                            if frame.get("method") == "dictation.partial":
                                partials.append(frame["params"])
                            elif frame.get("id") == 10 + seq:
                                assert frame["result"]["ackedSeq"] == seq, frame
                                break
                finish = {"dictationId": dictation_id, "lastSeq": len(chunks)}
                await speaker.send(
                    json.dumps(
                        {"jsonrpc": "2.0", "id": 99, "method": "dictation.finish", "params": finish}
                    )
                )
                final = await answer(speaker, 99, HANG_GUARD)
                return partials, final

            done: asyncio.Future[Any] = asyncio.ensure_future(dictate())
            answered = await _ping_until(pinger, done)
            partials, final = await done
            return partials, final, answered
        finally:
            await speaker.close()
            await pinger.close()

    partials, final, answered = asyncio.run(asyncio.wait_for(scenario(), HANG_GUARD))
    assert "result" in final, final
    # The grammar takes one command per utterance: the final names it.
    assert "window" in final["result"]["text"].split(), final
    assert partials, "no partial arrived"
    assert answered >= 1
