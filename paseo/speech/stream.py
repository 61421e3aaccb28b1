"""Client side of dictation: stream chunks, survive reconnects, return the final transcript.

Used by ``paseo dictate`` and usable by any Python client. Chunks are kept until the daemon
acknowledges them; when the connection drops, the client (which reconnects by itself) asks
``dictation.start {dictationId}`` how far the daemon got and resends only what follows.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Unavailable

if TYPE_CHECKING:
    from paseo.client import PaseoClient

CHUNK_BYTES = 32000
"""One second of 16 kHz mono 16-bit PCM."""

MAX_RESUMES = 5

FINISH_TIMEOUT = 600.0
"""The final pass transcribes the whole dictation: allow far more than one call's default."""


async def dictate(
    client: PaseoClient,
    chunks: AsyncIterator[bytes],
    *,
    mime_type: str,
    language: str | None = None,
    on_partial: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Send ``chunks`` as one dictation; returns the ``dictation.finish`` answer
    (``{dictationId, text, ackedSeq}``). ``on_partial`` hears each partial transcript; without
    it the daemon computes none."""
    from paseo.rpc.errors import ConnectionLost

    params: dict[str, Any] = {"mimeType": mime_type, "partials": on_partial is not None}
    if language:
        params["language"] = language
    started = await client.call("dictation.start", params)
    dictation_id = str(started["dictationId"])

    finishing = False

    def partial(_method: str, event: dict[str, Any]) -> None:
        # A partial computed before finish can arrive after it: the final supersedes it.
        if finishing or on_partial is None:
            return
        if event.get("dictationId") == dictation_id:
            on_partial(str(event.get("text", "")))

    unsubscribe = client.on("dictation.partial", partial)
    unacked: dict[int, bytes] = {}
    resumes = 0

    async def resume() -> None:
        nonlocal resumes
        while True:
            resumes += 1
            if resumes > MAX_RESUMES:
                raise Unavailable(
                    f"dictation {dictation_id}: gave up after {MAX_RESUMES} reconnects"
                )
            try:
                state = await client.call("dictation.start", {"dictationId": dictation_id})
                break
            except ConnectionLost:
                # The loss can be seen before the client notices it: the question went out on
                # the closing socket. Ask again once the client has seen it and reconnected.
                await asyncio.sleep(0.1 * resumes)
        acked = int(state["ackedSeq"])
        for seq in [s for s in unacked if s <= acked]:
            del unacked[seq]

    async def deliver() -> None:
        """Send every unacknowledged chunk, in order, resuming after lost connections."""
        while unacked:
            seq = min(unacked)
            try:
                ack = await client.call(
                    "dictation.chunk",
                    {"dictationId": dictation_id, "seq": seq, "audio": _b64(unacked[seq])},
                )
            except ConnectionLost:
                await resume()
                continue
            for done in [s for s in unacked if s <= int(ack["ackedSeq"])]:
                del unacked[done]

    try:
        seq = 0
        async for data in chunks:
            if not data:
                continue
            seq += 1
            unacked[seq] = data
            await deliver()
        finishing = True
        while True:
            try:
                result: dict[str, Any] = await client.call(
                    "dictation.finish",
                    {"dictationId": dictation_id, "lastSeq": seq},
                    timeout=FINISH_TIMEOUT,
                )
                return result
            except ConnectionLost:
                await resume()
                await deliver()
    finally:
        unsubscribe()


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode("ascii")
