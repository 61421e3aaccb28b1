"""Turn detection for voice mode: where a speaker's utterance starts and ends.

Audio arrives as raw signed 16-bit little-endian PCM at the client's rate and channel count.
:class:`ToMono16k` turns it into 16 kHz mono as it streams (linear interpolation, carried
across chunk boundaries), and :class:`TurnDetector` runs WebRTC's voice activity detector
(``webrtcvad``, from the maintained ``webrtcvad-wheels`` distribution) on 30 ms frames.

Why WebRTC's VAD and not an energy threshold: its GMM classifier tells speech from steady
noise (fans, hum) at any recording level, where a fixed energy threshold needs calibrating
per microphone; it is small, native and has no model files to download.

An utterance starts when most of the last :data:`START_FRAMES` frames are speech (the frames
before that are kept, so the first syllable is not clipped) and ends after ``silence_ms`` of
frames without speech. Utterances with less than :data:`MIN_SPEECH_MS` of speech (a click, a
cough) are dropped. Continuous speech is cut every :data:`MAX_UTTERANCE_MS` (the piece is
finished, the next starts at once): 62 minutes of speech without a pause were once held as one
utterance (+128 MiB), and a transcription of it would have taken as long.

``webrtcvad`` comes with the ``speech`` extra (``pip install 'paseo[speech]'``): it is imported
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
START_FRAMES = 10
"""300 ms of context: an utterance starts when more than half of it is speech."""
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
    ) -> None:
        self._vad = _vad(aggressiveness)
        self._end_frames = max(1, silence_ms // FRAME_MS)
        self._max_frames = max(START_FRAMES, max_utterance_ms // FRAME_MS)
        self._min_voiced = max(1, MIN_SPEECH_MS // FRAME_MS)
        self._pending = b""
        self._ring: collections.deque[tuple[bytes, bool]] = collections.deque(maxlen=START_FRAMES)
        self._utterance: list[bytes] | None = None
        self._voiced = 0
        self._silent = 0

    @property
    def speaking(self) -> bool:
        """An utterance is in progress."""
        return self._utterance is not None

    def feed(self, pcm: bytes) -> list[bytes]:
        """The utterances that ended in ``pcm`` (each as 16 kHz mono PCM)."""
        data = self._pending + pcm
        finished: list[bytes] = []
        offset = 0
        while offset + FRAME_BYTES <= len(data):
            frame = data[offset : offset + FRAME_BYTES]
            offset += FRAME_BYTES
            done = self._frame(frame, self._vad.is_speech(frame, RATE))
            if done is not None:
                finished.append(done)
        self._pending = data[offset:]
        return finished

    def _frame(self, frame: bytes, speech: bool) -> bytes | None:
        if self._utterance is None:
            self._ring.append((frame, speech))
            if sum(voiced for _, voiced in self._ring) * 2 > START_FRAMES:
                self._utterance = [f for f, _ in self._ring]
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
        utterance, voiced = self._utterance, self._voiced
        self._utterance, self._voiced, self._silent = None, 0, 0
        if utterance is None or voiced < self._min_voiced:
            return None
        return b"".join(utterance)

    def flush(self) -> bytes | None:
        """End of the speaker's turn (the client said so, or its audio ended): the utterance
        in progress, if any."""
        self._pending = b""
        self._ring.clear()
        return self._end()

    def reset(self) -> None:
        """Forget the utterance in progress (an abort)."""
        self._pending = b""
        self._ring.clear()
        self._utterance, self._voiced, self._silent = None, 0, 0


def _vad(aggressiveness: int) -> Any:
    """WebRTC's detector; :class:`Unavailable` with the install command without the extra."""
    try:
        import webrtcvad
    except ImportError:
        raise Unavailable(
            "voice mode's turn detection is unavailable: webrtcvad-wheels is not installed "
            f"(the 'speech' extra of paseo): {install_command('paseo', ('speech',))}"
        ) from None
    return webrtcvad.Vad(aggressiveness)
