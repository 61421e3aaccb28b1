"""Speech engines: one chosen per use site (dictation STT, voice-mode STT and TTS)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class SpeechToText(ABC):
    """Turns audio into text."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    @abstractmethod
    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        """Return the transcript of ``audio``. Raises ``Unavailable`` if the engine cannot run."""


class TextToSpeech(ABC):
    """Turns text into audio."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    @abstractmethod
    async def synthesize(self, text: str, *, voice: str | None = None) -> tuple[bytes, str]:
        """Return ``(audio bytes, mime type)`` speaking ``text``."""
