"""Speech to text with pocketsphinx, fully offline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.interfaces.speech import SpeechToText

from paseo_speech_local.models import SphinxModel, sphinx_model
from paseo_speech_local.worker import DecoderProcess


class LocalSpeechToText(SpeechToText):
    """pocketsphinx on 16 kHz mono PCM (other formats converted, see
    :mod:`paseo_speech_local.audio`).

    ``settings``: the use site's fields (``model``, ``language``) plus ``modelsDir``. Decoding
    and conversion run in a worker process of this engine (:mod:`paseo_speech_local.worker`),
    started on first use and kept with its decoder loaded; utterances are decoded one at a
    time (pocketsphinx decoders are not thread-safe). :meth:`aclose` ends the worker.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self._model: SphinxModel = sphinx_model(settings)
        self._worker = DecoderProcess()

    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        if language and language != self.settings.get("language"):
            # A per-call language needs its own model check (the bundled one is English).
            sphinx_model({**self.settings, "language": language})
        return await self._worker.decode(self._model.decoder_options(), audio, mime_type)

    def worker_pids(self) -> list[int]:
        """The decoding process (none before the first transcription)."""
        return self._worker.pids()

    async def aclose(self) -> None:
        await self._worker.close()
