"""The speech kernel service: transcription, synthesis and dictation on the configured engines.

It depends on two ports only: a :class:`~paseo.services.ConfigView` (read at each use, so
``paseo reload`` switches engines) and a driver loader (``(group, name) -> engine class``).
Engines are imported the first time a site uses them. Voice mode
(:class:`~paseo.speech.voice.VoiceSessions`) sits beside the dictations: numbered chunks for
its microphone, the ``voiceMode`` STT/TTS sites of the same engines, and an agent port
(:class:`~paseo.speech.voice.VoiceAgents`) handed in by the composition root.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import Unavailable

from paseo.speech.audio import WAV, check_format, normalize
from paseo.speech.dictation import Dictation, Dictations, Notify
from paseo.speech.engines import DriverLoader, Engines
from paseo.speech.voice import VoiceAgents, VoiceSession, VoiceSessions

if TYPE_CHECKING:
    from paseo.services import ConfigView


class SpeechService:
    """See the module docstring."""

    name = "speech"

    def __init__(
        self,
        config: ConfigView,
        load: DriverLoader,
        dictations: Dictations | None = None,
        *,
        agents: VoiceAgents | None = None,
    ) -> None:
        self._config = config
        self.engines = Engines(config, load)
        self.dictations = dictations or Dictations()
        self.voice = VoiceSessions(agents or _NoAgents(), self._voice_stt, self._voice_tts)

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        await self.voice.close()
        await self.dictations.close()
        await self.engines.close()

    # --- one-shot --------------------------------------------------------------------------

    def installed(self) -> dict[str, list[dict[str, Any]]]:
        """Installed STT and TTS drivers (entry-point metadata; nothing imported), each with
        the install command when the extra it needs is missing."""
        from paseo_hookspecs import STT_GROUP, TTS_GROUP

        from paseo.plugins.discovery import entry_point_candidates
        from paseo.plugins.extras import missing_extra

        def unavailable(distribution: str | None, extras: tuple[str, ...]) -> str | None:
            missing = missing_extra(distribution, extras)
            return missing.message if missing is not None else None

        return {
            role: [
                {
                    "name": c.name,
                    "distribution": c.distribution,
                    "builtin": c.builtin,
                    "unavailable": unavailable(c.distribution, c.extras),
                }
                for c in entry_point_candidates(group)
            ]
            for role, group in (("stt", STT_GROUP), ("tts", TTS_GROUP))
        }

    async def transcribe(
        self,
        audio: bytes,
        *,
        mime_type: str,
        language: str | None = None,
        site: str = "dictation",
        engine: str | None = None,
    ) -> tuple[str, str]:
        """``(text, engine name)`` of ``audio`` with the STT engine of ``site``: one of at most
        :data:`~paseo.speech.dictation.MAX_TRANSCRIPTIONS` passes at once, the audio made whole
        in a worker thread (it may be megabytes)."""
        choice = self.engines.choose(site, engine)
        stt = self.engines.stt(choice)
        await self.engines.close_retired()
        language = language or choice.settings.get("language")
        async with self.dictations.transcriptions:
            data, mime = await asyncio.to_thread(normalize, audio, mime_type)
            text = await stt.transcribe(data, mime_type=mime, language=language)
        return text, choice.name

    async def synthesize(
        self, text: str, *, voice: str | None = None, engine: str | None = None
    ) -> tuple[bytes, str, str]:
        """``(audio, mime type, engine name)`` speaking ``text`` (``features.voiceMode.tts``)."""
        choice = self.engines.choose("voiceMode.tts", engine)
        audio, mime = await self.engines.tts(choice).synthesize(text, voice=voice)
        return audio, mime, choice.name

    # --- dictation -------------------------------------------------------------------------

    async def dictation_start(
        self,
        *,
        mime_type: str,
        language: str | None,
        resume: str | None,
        notify: Notify,
        partials: bool = True,
    ) -> Dictation:
        """A new dictation on ``features.dictation.stt``, or ``resume`` re-attached."""
        if resume is not None:
            dictation = await self.dictations.get(resume)
        else:
            choice = self.engines.choose("dictation")
            check_format(mime_type)
            dictation = await self.dictations.create(
                mime_type=mime_type,
                language=language or choice.settings.get("language"),
                engine_name=choice.name,
                engine=self.engines.stt(choice),
                partials=partials,
            )
        dictation.notify = notify
        return dictation

    async def dictation_chunk(
        self, dictation_id: str, seq: int, data: bytes, notify: Notify
    ) -> tuple[Dictation, bool]:
        """Store chunk ``seq``: ``(dictation, stored now)`` (``False``: a repeat). Answers once
        the partials have caught up enough (see :meth:`Dictation.caught_up`): back-pressure."""
        dictation = await self.dictations.get(dictation_id)
        dictation.notify = notify
        if seq > dictation.acked_seq:
            self.dictations.check_room(len(data))
        stored = dictation.add(seq, data)
        if stored:
            await dictation.caught_up()
        return dictation, stored

    async def dictation_finish(
        self, dictation_id: str, last_seq: int | None, notify: Notify
    ) -> tuple[Dictation, str]:
        dictation = await self.dictations.get(dictation_id)
        dictation.notify = notify
        return dictation, await dictation.finish(last_seq)

    async def dictation_cancel(self, dictation_id: str) -> bool:
        return await self.dictations.remove(dictation_id)

    # --- voice mode ------------------------------------------------------------------------

    async def _voice_stt(self, wav: bytes) -> str:
        text, _engine = await self.transcribe(wav, mime_type=WAV, site="voiceMode")
        return text

    async def _voice_tts(self, text: str) -> tuple[bytes, str]:
        audio, mime, _engine = await self.synthesize(text)
        return audio, mime

    async def voice_start(
        self,
        agent: str,
        *,
        mime_type: str,
        instructions: str | None,
        silence_ms: int,
        notify: Notify,
    ) -> VoiceSession:
        """Attach voice mode to ``agent`` (see :mod:`paseo.speech.voice`)."""
        voice = self._config.resolved.features.voiceMode
        if not voice.enabled:
            raise Unavailable("voice mode is disabled (features.voiceMode.enabled is false)")
        if voice.turnDetection.provider != "local":
            raise Unavailable(
                f"turn detection {voice.turnDetection.provider!r} runs inside that provider's "
                "realtime API, which this daemon does not use; set "
                "features.voiceMode.turnDetection.provider to local"
            )
        # Fail now, not at the first utterance, when an engine cannot run.
        self.engines.stt(self.engines.choose("voiceMode"))
        self.engines.tts(self.engines.choose("voiceMode.tts"))
        session = await self.voice.start(
            agent, mime_type=mime_type, instructions=instructions, silence_ms=silence_ms
        )
        session.notify = notify
        return session


class _NoAgents:
    """The agent port of a speech service built without agents (tests of the engines)."""

    async def resolve(self, reference: str) -> str:
        raise Unavailable("voice mode needs the agent service")

    async def refresh_tools(self, agent_id: str) -> None:
        return None

    async def prompt(self, agent_id: str, text: str) -> None:
        raise Unavailable("voice mode needs the agent service")

    async def interrupt(self, agent_id: str) -> bool:
        return False

    async def approve(self, agent_id: str, request_id: str) -> None:
        return None
