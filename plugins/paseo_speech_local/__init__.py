"""The ``local`` speech engines: pocketsphinx (speech to text) and espeak-ng (text to speech).

Fully offline: models come with the pocketsphinx wheel and the espeak-ng package, or from
directories under ``providers.local.modelsDir`` (see :mod:`paseo_speech_local.models`); nothing
is downloaded. Registered as the ``local`` driver of ``paseo.speech.stt`` and ``paseo.speech.tts``.
"""

from __future__ import annotations

from paseo_speech_local.stt import LocalSpeechToText
from paseo_speech_local.tts import LocalTextToSpeech

__all__ = ["LocalSpeechToText", "LocalTextToSpeech"]
