"""Dictation through the real daemon: a connection dropped mid-stream resumes from the last
acknowledged chunk, and the engine receives every chunk exactly once."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import wave
from collections.abc import Callable
from typing import Any

from helpers.daemon_rpc import LiveDaemon, answer, hello, open_ws, rpc
from websockets.asyncio.client import ClientConnection

from paseo.testing.fake_audio import FakeAudioServer

from .conftest import PHRASE


def _chunks(data: bytes, count: int) -> list[bytes]:
    size = -(-len(data) // count)
    return [data[i : i + size] for i in range(0, len(data), size)]


def _chunk(dictation_id: str, seq: int, data: bytes) -> dict[str, Any]:
    return {"dictationId": dictation_id, "seq": seq, "audio": base64.b64encode(data).decode()}


async def _connect(live: LiveDaemon) -> ClientConnection:
    ws = await open_ws(live.url, live.credential)
    await hello(ws)
    return ws


async def _drop_midstream(
    live: LiveDaemon, mime_type: str, chunks: list[bytes], acked_before_drop: int
) -> tuple[ClientConnection, str, int]:
    """Send chunks 1..acked_before_drop with their acks, fire the next one without waiting,
    and drop the connection. Returns a new connection, the id and the daemon's ackedSeq."""
    first = await _connect(live)
    started = await rpc(first, 1, "dictation.start", {"mimeType": mime_type})
    dictation_id = started["result"]["dictationId"]
    for seq in range(1, acked_before_drop + 1):
        params = _chunk(dictation_id, seq, chunks[seq - 1])
        ack = await rpc(first, 1 + seq, "dictation.chunk", params)
        assert ack["result"] == {"dictationId": dictation_id, "ackedSeq": seq, "duplicate": False}
    seq = acked_before_drop + 1
    frame = {"jsonrpc": "2.0", "id": 99, "method": "dictation.chunk"}
    await first.send(json.dumps({**frame, "params": _chunk(dictation_id, seq, chunks[seq - 1])}))
    await first.close()

    second = await _connect(live)
    resumed = await rpc(second, 1, "dictation.start", {"dictationId": dictation_id})
    state = resumed["result"]
    assert state["dictationId"] == dictation_id
    assert state["state"] == "open"
    # The chunk in flight at the drop may or may not have been stored: the ack says which.
    assert state["ackedSeq"] in (acked_before_drop, acked_before_drop + 1)
    return second, dictation_id, int(state["ackedSeq"])


async def _resend_and_finish(
    ws: ClientConnection, dictation_id: str, chunks: list[bytes], acked: int
) -> dict[str, Any]:
    # Resend from one chunk *before* the acknowledged one: a repeat must be harmless.
    for seq in range(acked, len(chunks) + 1):
        params = _chunk(dictation_id, seq, chunks[seq - 1])
        ack = await rpc(ws, 100 + seq, "dictation.chunk", params)
        assert ack["result"]["ackedSeq"] == max(seq, acked)
        if seq <= acked:
            assert ack["result"]["duplicate"] is True
    params = {"dictationId": dictation_id, "lastSeq": len(chunks)}
    request = {"jsonrpc": "2.0", "id": 500, "method": "dictation.finish", "params": params}
    await ws.send(json.dumps(request))
    # The final arrives twice: as a notification and as the answer.
    result: dict[str, Any] = {}
    event: dict[str, Any] = {}
    async with asyncio.timeout(60):
        while not (result and event):
            frame = json.loads(await ws.recv())
            if frame.get("id") == 500:
                assert "result" in frame, frame
                result = frame["result"]
            elif frame.get("method") == "dictation.final":
                event = frame["params"]
    assert event["text"] == result["text"]
    assert event["stream"] == "dictation"
    return result


def test_local_dictation_survives_a_dropped_connection(
    daemon_factory: Callable[..., Any], local_config: dict[str, Any], spoken: bytes
) -> None:
    live = daemon_factory(local_config)
    chunks = _chunks(spoken, 8)

    async def run() -> dict[str, Any]:
        ws, dictation_id, acked = await _drop_midstream(live, "audio/wav", chunks, 4)
        try:
            return await _resend_and_finish(ws, dictation_id, chunks, acked)
        finally:
            await ws.close()

    final = asyncio.run(run())
    assert final["text"] == PHRASE
    assert final["ackedSeq"] == len(chunks)


def _pcm(wav: bytes) -> bytes:
    with wave.open(io.BytesIO(wav)) as reader:
        return reader.readframes(reader.getnframes())


def test_openai_dictation_uploads_every_chunk_exactly_once(
    daemon_factory: Callable[..., Any],
    openai_config: dict[str, Any],
    fake_audio: FakeAudioServer,
    spoken: bytes,
) -> None:
    live = daemon_factory(openai_config)
    pcm = _pcm(spoken)
    chunks = _chunks(pcm[: len(pcm) - len(pcm) % 2], 10)
    assert all(len(chunk) % 2 == 0 for chunk in chunks)
    fake_audio.transcript = "a transcript"

    async def run() -> dict[str, Any]:
        ws, dictation_id, acked = await _drop_midstream(
            live, "audio/pcm;rate=22050;channels=1", chunks, 5
        )
        try:
            return await _resend_and_finish(ws, dictation_id, chunks, acked)
        finally:
            await ws.close()

    final = asyncio.run(run())
    assert final["text"] == "a transcript"
    uploads = [
        _pcm(r.files["file"].data)
        for r in fake_audio.requests
        if r.path == "/v1/audio/transcriptions"
    ]
    expected = b"".join(chunks)
    # Partials uploaded prefixes of the audio; the final uploaded all of it, once each chunk.
    assert expected in uploads
    assert all(expected.startswith(upload) for upload in uploads)
    final_request = next(
        r for r in fake_audio.requests if r.files and _pcm(r.files["file"].data) == expected
    )
    assert final_request.fields == {
        "model": "whisper-large",
        "response_format": "json",
        "language": "en",
    }
    assert final_request.headers["authorization"] == "Bearer sk-test"


async def _notification(ws: ClientConnection, method: str) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            frame = json.loads(await ws.recv())
            if frame.get("method") == method:
                params: dict[str, Any] = frame["params"]
                return params


def test_partials_arrive_while_audio_is_sent(
    daemon_factory: Callable[..., Any],
    openai_config: dict[str, Any],
    fake_audio: FakeAudioServer,
) -> None:
    live = daemon_factory(openai_config)
    fake_audio.transcript = "so far"

    async def run() -> dict[str, Any]:
        ws = await _connect(live)
        try:
            started = await rpc(ws, 1, "dictation.start", {})
            dictation_id = started["result"]["dictationId"]
            assert started["result"]["mimeType"] == "audio/pcm;rate=16000;channels=1"
            await ws.send(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 2,
                        "method": "dictation.chunk",
                        "params": _chunk(dictation_id, 1, b"\x01\x00" * 1600),
                    }
                )
            )
            await answer(ws, 2)
            return await _notification(ws, "dictation.partial")
        finally:
            await ws.close()

    partial = asyncio.run(run())
    assert partial["text"] == "so far"
    assert partial["ackedSeq"] == 1
