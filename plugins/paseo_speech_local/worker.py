"""Decoding out of the daemon's process: pocketsphinx (and Whisper's feature extraction) holds
the interpreter lock for a whole utterance (seconds for a long one), even from a thread, and
stalled every client of the daemon meanwhile; the conversion to 16 kHz (pure Python) held it
too. Both run here, in a worker process per engine.

:class:`DecoderProcess` owns one ``spawn``-ed worker (a fork of a daemon with threads and an
event loop is unsafe), started on first use and kept warm with its decoder loaded. Jobs are
decoded one at a time, as the decoder requires; callers queue. A worker that died (killed, out
of memory) fails its job with :class:`~paseo_hookspecs.errors.Unavailable` and the next job
starts a fresh one. :meth:`DecoderProcess.close` ends and reaps it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from paseo_hookspecs.errors import Unavailable

from paseo_speech_local.audio import TARGET_RATE, to_pcm16k

_decoders: dict[tuple[tuple[str, str], ...], Any] = {}
"""In the worker: the decoder of each model it was asked for (an engine has one model)."""


def decode(options: dict[str, str], audio: bytes, mime_type: str) -> str:
    """In the worker: the transcript of ``audio`` with the model of ``options`` (with
    ``engine: whisper``, a Whisper model; otherwise pocketsphinx decoder options)."""
    pcm = to_pcm16k(audio, mime_type)
    if not pcm:
        return ""  # pocketsphinx rejects an empty buffer; silence has no words
    if options.get("engine") == "whisper":
        from paseo_speech_local import whisper

        return whisper.decode(options, pcm)
    key = tuple(sorted(options.items()))
    decoder = _decoders.get(key) or _build(key, options)
    try:
        decoder.start_utt()
        decoder.process_raw(pcm, full_utt=True)
        decoder.end_utt()
    except (RuntimeError, IndexError, ValueError) as exc:
        # A failed utterance can leave the decoder unable to start the next one.
        _decoders.pop(key, None)
        raise Unavailable(f"pocketsphinx failed: {exc}") from None
    hypothesis = decoder.hyp()
    return str(hypothesis.hypstr).strip() if hypothesis is not None else ""


def _build(key: tuple[tuple[str, str], ...], options: dict[str, str]) -> Any:
    try:
        from pocketsphinx import Decoder  # type: ignore[import-untyped]
    except ImportError as exc:
        raise Unavailable(f"pocketsphinx is not installed: {exc}") from None
    try:
        decoder = Decoder(samprate=TARGET_RATE, loglevel="FATAL", **options)
    except (RuntimeError, ValueError) as exc:
        raise Unavailable(f"pocketsphinx could not load its model: {exc}") from None
    _decoders.clear()  # one model per engine: a replaced one is not used again
    _decoders[key] = decoder
    return decoder


class DecoderProcess:
    """One worker process decoding an engine's utterances (see the module docstring)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        return self._pool

    async def decode(self, options: dict[str, str], audio: bytes, mime_type: str) -> str:
        pool = self._executor()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(pool, decode, options, audio, mime_type)
        except BrokenProcessPool:
            # The worker died mid-job: forget it, so that the next job starts a new one.
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise Unavailable("the speech-to-text worker process died; try again") from None

    def pids(self) -> list[int]:
        """The worker's process id, once it runs (diagnostics and tests)."""
        processes = getattr(self._pool, "_processes", None) or {}
        return sorted(processes)

    async def close(self) -> None:
        """End the worker and reap it (queued jobs are cancelled)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            # One call: a second shutdown would not wait (the first forgets the pool's thread).
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
