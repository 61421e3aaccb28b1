"""Speech: engines per use site, one-shot transcription and synthesis, resumable dictation.

:class:`~paseo.speech.service.SpeechService` is the service; :mod:`paseo.speech.rpc` its RPC
adapter (``method_groups(ref)``, ``notifications()``). See ``docs/speech.md``.
"""
