"""The ``openai`` speech engines: any OpenAI-compatible ``/v1/audio`` server.

Registered as the ``openai`` driver of ``paseo.speech.stt`` and ``paseo.speech.tts``.
"""

from __future__ import annotations

from paseo_speech_openai.engines import OpenAiSpeechToText, OpenAiTextToSpeech

__all__ = ["OpenAiSpeechToText", "OpenAiTextToSpeech"]
