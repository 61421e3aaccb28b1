"""The Python client's dictation helper resumes by itself after its connection drops."""

from __future__ import annotations

import asyncio
import io
import wave
from collections.abc import AsyncIterator, Callable
from typing import Any

from paseo.client import PaseoClient
from paseo.speech.stream import dictate
from paseo.testing.fake_audio import FakeAudioServer


def test_dictate_resends_only_what_the_daemon_lacks_after_a_drop(
    daemon_factory: Callable[..., Any],
    openai_config: dict[str, Any],
    fake_audio: FakeAudioServer,
) -> None:
    live = daemon_factory(openai_config)
    chunks = [bytes([n, 0]) * 4000 for n in range(1, 9)]
    fake_audio.transcript = "resumed"

    async def run() -> dict[str, Any]:
        closing: set[asyncio.Future[None]] = set()
        async with PaseoClient(live.url, home=live.home, max_backoff=0.5) as client:

            async def source() -> AsyncIterator[bytes]:
                for index, chunk in enumerate(chunks):
                    if index == 4:
                        # A real drop while chunk 5 is in flight: the socket closes under the
                        # client, which reconnects; the daemon may or may not have chunk 5.
                        ws = client._ws
                        assert ws is not None
                        closing.add(asyncio.ensure_future(ws.close()))
                    yield chunk

            return await dictate(client, source(), mime_type="audio/pcm;rate=16000")

    final = asyncio.run(run())
    assert final["text"] == "resumed"
    assert final["ackedSeq"] == len(chunks)
    (upload,) = [r.files["file"].data for r in fake_audio.requests]
    with wave.open(io.BytesIO(upload)) as reader:
        assert reader.readframes(reader.getnframes()) == b"".join(chunks)
