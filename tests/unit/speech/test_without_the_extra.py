"""Without the ``speech`` extra (a lean ``pip install paseo``): voice mode's turn detection is
refused with the command that installs it, and the daemon's other modules still import (the
whole lean install is proven in a fresh venv by tests/e2e/lean)."""

from __future__ import annotations

import sys

import pytest
from paseo_hookspecs.errors import Unavailable

from paseo.speech.turns import TurnDetector


def test_turn_detection_without_webrtcvad_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes `import webrtcvad` raise ImportError, as when it is absent.
    monkeypatch.setitem(sys.modules, "webrtcvad", None)
    with pytest.raises(Unavailable) as refused:
        TurnDetector()
    assert str(refused.value) == (
        "voice mode's turn detection is unavailable: webrtcvad-wheels is not installed "
        "(the 'speech' extra of paseo): pip install 'paseo[speech]'"
    )


def test_turn_detection_with_webrtcvad_builds_a_detector() -> None:
    assert not TurnDetector().speaking
