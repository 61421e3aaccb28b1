"""Text to speech with the espeak-ng command, fully offline."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.interfaces.speech import TextToSpeech

from paseo_speech_local.models import model_directory

ESPEAK_DEFAULT_WPM = 175
"""espeak-ng's own default rate; the site's ``speed`` multiplies it."""
SAY_WPM = 150
"""The rate without a ``speed``: the local speech-to-text engine understands espeak-ng at 150
words per minute far better than at 175 (bench/speech.py: 93% of words against 87%)."""

_SYNTH_TIMEOUT = 120.0


class LocalTextToSpeech(TextToSpeech):
    """espeak-ng writing a WAV (22.05 kHz mono) to stdout.

    ``settings``: the use site's fields — ``voice`` (an espeak-ng voice such as ``en-us`` or
    ``en+f3``), ``speed`` (a multiplier of 175 words per minute; without it 150, see
    :data:`SAY_WPM`), ``model`` (a data directory
    under ``modelsDir/espeak-ng``) — plus ``modelsDir``. ``speakerId`` is not used by espeak-ng.
    """

    def __init__(self, settings: Mapping[str, Any]) -> None:
        super().__init__(settings)
        self._data = model_directory(settings, "espeak-ng")

    def command(self, voice: str | None) -> list[str]:
        """The espeak-ng argument list (text goes on stdin)."""
        binary = shutil.which("espeak-ng")
        if binary is None:
            raise Unavailable(
                "espeak-ng is not installed (Debian/Ubuntu: apt-get install espeak-ng)"
            )
        command = [binary, "--stdout"]
        speed = self.settings.get("speed")
        if not speed:
            command += ["-s", str(SAY_WPM)]
        if self._data is not None:
            command.append(f"--path={self._data}")
        chosen = voice or self.settings.get("voice")
        if chosen:
            command += ["-v", str(chosen)]
        if speed:
            command += ["-s", str(max(80, round(ESPEAK_DEFAULT_WPM * float(speed))))]
        return command

    async def synthesize(self, text: str, *, voice: str | None = None) -> tuple[bytes, str]:
        if not text.strip():
            raise InvalidParams("nothing to say: the text is empty")
        process = await asyncio.create_subprocess_exec(
            *self.command(voice),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(_SYNTH_TIMEOUT):
                audio, errors = await process.communicate(text.encode())
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise Unavailable("espeak-ng did not finish in time") from None
        if process.returncode != 0 or not audio:
            detail = errors.decode(errors="replace").strip()[-300:]
            raise InvalidParams(f"espeak-ng failed: {detail or 'no audio'}")
        return audio, "audio/wav"
