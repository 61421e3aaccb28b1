"""Speech to text with pocketsphinx, fully offline."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import Unavailable
from paseo_hookspecs.interfaces.speech import SpeechToText

from paseo_speech_local.audio import TARGET_RATE, to_pcm16k
from paseo_speech_local.models import SphinxModel, sphinx_model


class LocalSpeechToText(SpeechToText):
    """pocketsphinx on 16 kHz mono PCM (other formats converted, see
    :mod:`paseo_speech_local.audio`).

    ``settings``: the use site's fields (``model``, ``language``) plus ``modelsDir``. The
    decoder is built on first use and reused; pocketsphinx decoders are not thread-safe, so
    utterances are decoded one at a time per engine.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self._model: SphinxModel = sphinx_model(settings)
        self._decoder: Any = None
        self._lock = threading.Lock()

    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        if language and language != self.settings.get("language"):
            # A per-call language needs its own model check (the bundled one is English).
            sphinx_model({**self.settings, "language": language})
        pcm = await asyncio.to_thread(to_pcm16k, audio, mime_type)
        return await asyncio.to_thread(self._decode, pcm)

    def _decode(self, pcm: bytes) -> str:
        if not pcm:
            return ""  # pocketsphinx rejects an empty buffer; silence has no words
        with self._lock:
            decoder = self._decoder or self._build()
            try:
                decoder.start_utt()
                decoder.process_raw(pcm, full_utt=True)
                decoder.end_utt()
            except (RuntimeError, IndexError, ValueError) as exc:
                # A failed utterance can leave the decoder unable to start the next one.
                self._decoder = None
                raise Unavailable(f"pocketsphinx failed: {exc}") from None
            hypothesis = decoder.hyp()
        return str(hypothesis.hypstr).strip() if hypothesis is not None else ""

    def _build(self) -> Any:
        try:
            from pocketsphinx import Decoder  # type: ignore[import-untyped]
        except ImportError as exc:
            raise Unavailable(f"pocketsphinx is not installed: {exc}") from None
        try:
            self._decoder = Decoder(
                samprate=TARGET_RATE, loglevel="FATAL", **self._model.decoder_options()
            )
        except (RuntimeError, ValueError) as exc:
            raise Unavailable(f"pocketsphinx could not load its model: {exc}") from None
        return self._decoder
