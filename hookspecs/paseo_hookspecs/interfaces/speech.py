"""Speech engines: one chosen per use site (dictation STT, voice-mode STT and TTS)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class SpeechToText(ABC):
    """Turns audio into text.

    Implement and register: subclass it (``self.settings`` is the use site's configuration as a
    dict) and name the class in the ``paseo.speech.stt`` entry-point group::

        class MyStt(SpeechToText):
            async def transcribe(self, audio, *, mime_type, language=None):
                return await my_recognizer(audio, mime_type, language)

        # pyproject.toml
        [project.entry-points."paseo.speech.stt"]
        mine = "my_package:MyStt"

    Engines are imported only when a use site selects them (``speech.transcribe`` with
    ``engine: "mine"``); the built-in ``local`` and ``openai`` engines are written this way.
    """

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    @abstractmethod
    async def transcribe(self, audio: bytes, *, mime_type: str, language: str | None = None) -> str:
        """Return the transcript of ``audio``. Raises ``Unavailable`` if the engine cannot run.

        Heavy work (decoding, conversion) must not hold the daemon's event loop, and not the
        interpreter lock either for long: run it in a process of the engine's own (the
        ``local`` engine does) or in native code that releases the lock."""

    async def aclose(self) -> None:  # noqa: B027 - optional, empty by default
        """Release what the engine holds (worker processes, connections): called when the
        daemon stops or the engine is replaced. Nothing by default."""


class TextToSpeech(ABC):
    """Turns text into audio. Register it like :class:`SpeechToText`, in the
    ``paseo.speech.tts`` group: ``mine = "my_package:MyTts"``."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings

    @abstractmethod
    async def synthesize(self, text: str, *, voice: str | None = None) -> tuple[bytes, str]:
        """Return ``(audio bytes, mime type)`` speaking ``text``."""

    async def aclose(self) -> None:  # noqa: B027 - optional, empty by default
        """See :meth:`SpeechToText.aclose`."""
