"""The ``local`` speech engines: Whisper tiny.en (speech to text; pocketsphinx the fallback)
and espeak-ng (text to speech).

Fully offline: models come in packages (Whisper tiny.en's, the pocketsphinx wheel's, the
espeak-ng package's), or from
directories under ``providers.local.modelsDir`` (see :mod:`paseo_speech_local.models`); nothing
is downloaded. Registered as the ``local`` driver of ``paseo.speech.stt`` and ``paseo.speech.tts``.
"""

from __future__ import annotations

from paseo_speech_local.stt import LocalSpeechToText
from paseo_speech_local.tts import LocalTextToSpeech

__all__ = ["LocalSpeechToText", "LocalTextToSpeech"]
