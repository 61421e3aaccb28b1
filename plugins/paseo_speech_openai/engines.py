"""The ``openai`` speech engines: ``POST /v1/audio/transcriptions`` and ``/v1/audio/speech``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams
from paseo_hookspecs.interfaces.speech import SpeechToText, TextToSpeech

from paseo_speech_openai.http import AudioApi, multipart

DEFAULT_STT_MODEL = "whisper-1"
DEFAULT_TTS_MODEL = "tts-1"
DEFAULT_VOICE = "alloy"

# File names the endpoint uses to guess the container (it reads the extension).
_EXTENSIONS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/mp4": "m4a",
    "audio/m4a": "m4a",
    "audio/ogg": "ogg",
    "audio/webm": "webm",
    "audio/flac": "flac",
}


class OpenAiSpeechToText(SpeechToText):
    """Transcription through an OpenAI-compatible server.

    ``settings``: the use site's fields — ``model`` (default ``whisper-1``), ``language``,
    ``baseUrl``, ``apiKey`` (see :class:`~paseo_speech_openai.http.AudioApi` for the fallbacks).
    ``confidenceThreshold`` is accepted and not applied: the plain ``json`` reply carries no
    confidence.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self.api = AudioApi(settings)

    def request(
        self, audio: bytes, *, mime_type: str, language: str | None = None
    ) -> tuple[bytes, str]:
        """The multipart body and content type of one transcription request."""
        base = mime_type.split(";", 1)[0].strip().lower()
        fields = {
            "model": str(self.settings.get("model") or DEFAULT_STT_MODEL),
            "response_format": "json",
        }
        chosen = language or self.settings.get("language")
        if chosen:
            fields["language"] = str(chosen)
        extension = _EXTENSIONS.get(base, base.rsplit("/", 1)[-1] or "bin")
        return multipart(fields, {"file": (f"audio.{extension}", audio, base)})

    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        body, content_type = self.request(audio, mime_type=mime_type, language=language)
        reply, _ = await asyncio.to_thread(
            self.api.post, "audio/transcriptions", body, content_type
        )
        try:
            return str(json.loads(reply)["text"]).strip()
        except (ValueError, KeyError, TypeError):
            raise InvalidParams("the transcription reply has no text") from None


class OpenAiTextToSpeech(TextToSpeech):
    """Speech through an OpenAI-compatible server, as WAV.

    ``settings``: ``model`` (default ``tts-1``), ``voice`` (default ``alloy``; free-form for
    self-hosted servers), ``speed``, ``baseUrl``, ``apiKey``.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self.api = AudioApi(settings)

    async def synthesize(self, text: str, *, voice: str | None = None) -> tuple[bytes, str]:
        if not text.strip():
            raise InvalidParams("nothing to say: the text is empty")
        payload: dict[str, Any] = {
            "model": str(self.settings.get("model") or DEFAULT_TTS_MODEL),
            "input": text,
            "voice": str(voice or self.settings.get("voice") or DEFAULT_VOICE),
            "response_format": "wav",
        }
        if self.settings.get("speed"):
            payload["speed"] = float(self.settings["speed"])
        audio, content_type = await asyncio.to_thread(self.api.post_json, "audio/speech", payload)
        return audio, content_type.split(";", 1)[0].strip() or "audio/wav"
