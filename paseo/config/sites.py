"""Where the speech use sites are, and which keys each provider variant of a site accepts.

Plain data, so that migration (which only reads and rewrites dicts) does not need pydantic.
The models in :mod:`paseo.config.models` must agree with these tables; a unit test checks.
"""

from __future__ import annotations

SPEECH_SITES: dict[tuple[str, ...], str] = {
    ("features", "dictation", "stt"): "stt",
    ("features", "voiceMode", "stt"): "stt",
    ("features", "voiceMode", "turnDetection"): "turnDetection",
    ("features", "voiceMode", "tts"): "tts",
}
"""Every speech use site (its JSON path) and its kind."""

SPEECH_SITE_FIELDS: dict[str, dict[str, frozenset[str]]] = {
    "stt": {
        "local": frozenset({"provider", "model", "language"}),
        "openai": frozenset(
            {"provider", "model", "language", "apiKey", "baseUrl", "confidenceThreshold"}
        ),
    },
    "turnDetection": {
        "local": frozenset({"provider"}),
        "openai": frozenset({"provider"}),
    },
    "tts": {
        "local": frozenset({"provider", "model", "voice", "speakerId", "speed"}),
        "openai": frozenset({"provider", "model", "voice", "speed", "apiKey", "baseUrl"}),
    },
}
"""For each kind of site, the keys each provider variant accepts."""
