"""Speech to text, fully offline: Whisper tiny.en by default, pocketsphinx as the fallback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.interfaces.speech import SpeechToText

from paseo_speech_local.models import SphinxModel, WhisperModel, stt_model
from paseo_speech_local.worker import DecoderProcess


class LocalSpeechToText(SpeechToText):
    """Whisper (CTranslate2) or pocketsphinx on 16 kHz mono PCM (other formats converted, see
    :mod:`paseo_speech_local.audio`); which one the site's ``model`` says
    (:func:`paseo_speech_local.models.stt_model`).

    ``settings``: the use site's fields (``model``, ``language``) plus ``modelsDir``. Decoding
    and conversion run in a worker process of this engine (:mod:`paseo_speech_local.worker`),
    started on first use and kept with its model loaded; utterances are decoded one at a
    time (neither decoder is shared between threads). :meth:`aclose` ends the worker.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self._model: SphinxModel | WhisperModel = stt_model(settings)
        self._worker = DecoderProcess()

    @property
    def model_kind(self) -> str:
        """``whisper`` or ``pocketsphinx``: the decoder this engine runs (diagnostics)."""
        return "whisper" if isinstance(self._model, WhisperModel) else "pocketsphinx"

    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        model = self._model
        if language and language != self.settings.get("language"):
            # A per-call language needs its own model check (the bundled ones are English).
            model = stt_model({**self.settings, "language": language})
        return await self._worker.decode(model.decoder_options(), audio, mime_type)

    def worker_pids(self) -> list[int]:
        """The decoding process (none before the first transcription)."""
        return self._worker.pids()

    async def aclose(self) -> None:
        await self._worker.close()
