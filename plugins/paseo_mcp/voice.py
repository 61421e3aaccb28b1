"""The voice-only ``speak`` tool: an agent talking to the person in voice mode.

The kernel offers it to an agent exactly while voice mode is attached to that agent (it is
filtered out of ``tools/list`` and refused in ``tools/call`` otherwise) and approves its
permission requests there. What the agent passes is synthesized with
``features.voiceMode.tts`` and streamed to the voice client; the call returns once it is sent.
"""

from __future__ import annotations

from typing import Any

from paseo_hookspecs.mcp_host import McpCaller, McpHost
from pydantic import BaseModel, ConfigDict, Field

DESCRIPTION = (
    "Say something to the user, who is talking to you by voice: short plain sentences, no "
    "markdown or code. Only what you pass here is heard."
)


class SpeakInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(min_length=1, max_length=4000, description="what to say")


async def speak(host: McpHost, caller: McpCaller, args: SpeakInput) -> Any:
    return await host.call(caller, "voice.speak", {"agentId": caller.agent_id, "text": args.text})
