"""The voice-only ``speak`` tool: an agent talking to the person in voice mode.

It is offered to an agent exactly while voice mode is attached to that agent
(:meth:`paseo_hookspecs.voice.VoiceOutput.attached`; filtered out of ``tools/list`` and refused
in ``tools/call`` otherwise). What the agent passes is synthesized with
``features.voiceMode.tts`` and streamed to the voice client; the call returns once it is sent.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.errors import NotFound
from pydantic import BaseModel, ConfigDict, Field

from paseo_mcp.caller import McpCaller
from paseo_mcp.handlers import Tooling

DESCRIPTION = (
    "Say something to the user, who is talking to you by voice: short plain sentences, no "
    "markdown or code. Only what you pass here is heard."
)


class SpeakInput(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    text: str = Field(min_length=1, max_length=4000, description="what to say")


async def speak(t: Tooling, caller: McpCaller, args: SpeakInput) -> Any:
    voice = t.ports.voice
    if voice is None:
        raise NotFound("this daemon has no voice mode")
    spoken = await voice.speak(caller.agent_id, args.text)
    return spoken.model_dump(mode="json")
