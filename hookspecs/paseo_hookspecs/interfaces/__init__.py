"""Abstract interfaces that plugins implement.

Each interface's docstrings are its contract: what must hold when a method returns, what it may
raise. ``docs/plugins.md`` is written from them.
"""

from paseo_hookspecs.interfaces.agent import AgentProvider, AgentSession
from paseo_hookspecs.interfaces.source import PluginSource
from paseo_hookspecs.interfaces.speech import SpeechToText, TextToSpeech
from paseo_hookspecs.interfaces.store import Store
from paseo_hookspecs.interfaces.transport import Transport

__all__ = [
    "AgentProvider",
    "AgentSession",
    "PluginSource",
    "SpeechToText",
    "Store",
    "TextToSpeech",
    "Transport",
]
