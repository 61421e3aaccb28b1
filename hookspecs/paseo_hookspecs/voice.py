"""Voice mode as other plugins see it: whether a person is talking to an agent by voice, and
speaking to them.

Voice mode (``voice.start``) attaches a voice session to one agent. A plugin that offers an
agent a way to talk back (the MCP server's ``speak`` tool) offers it exactly while
:meth:`VoiceOutput.attached` says so.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict


class Spoken(BaseModel):
    """What :meth:`VoiceOutput.speak` sent."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    voiceId: str
    speechId: str
    chunks: int
    mimeType: str


class VoiceOutput(Protocol):
    def attached(self, agent_id: str) -> bool:
        """Voice mode is attached to ``agent_id`` now."""

    async def speak(self, agent_id: str, text: str) -> Spoken:
        """Synthesize ``text`` and stream it to the voice client attached to ``agent_id``;
        returns once it is sent. ``NotFound`` when no voice session is attached, ``Conflict``
        when the person aborted."""


@runtime_checkable
class VoiceSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that offers voice output."""

    @property
    def voice(self) -> VoiceOutput: ...


__all__ = ["Spoken", "VoiceOutput", "VoiceSource"]
