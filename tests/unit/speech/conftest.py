"""Real audio for the speech tests: espeak-ng speaks, pocketsphinx listens with a grammar.

Free-form recognition of synthetic speech is poor, so the local engine is given a JSGF
grammar the way a user would: a model directory under ``providers.local.modelsDir``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PHRASE = "close the window please"
ESPEAK_VOICE = ("-v", "en-us", "-s", "140")
"""A voice and rate pocketsphinx follows reliably (espeak-ng output is deterministic)."""
TTS_SETTINGS = {"voice": "en-us", "speed": 0.8}
"""The same through the local TTS engine (0.8 x 175 words per minute = 140)."""
GRAMMAR = """#JSGF V1.0;
grammar commands;
public <command> = (open | close | lock) the (door | window | gate) [please | now];
"""


@pytest.fixture(scope="session")
def espeak() -> str:
    binary = shutil.which("espeak-ng")
    if binary is None:
        pytest.fail("espeak-ng is not installed: run scripts/test (it installs it)")
    return binary


@pytest.fixture(scope="session")
def spoken(espeak: str, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """:data:`PHRASE` spoken by espeak-ng, as a 22.05 kHz mono WAV."""
    target = tmp_path_factory.mktemp("spoken") / "phrase.wav"
    subprocess.run([espeak, *ESPEAK_VOICE, "-w", str(target), PHRASE], check=True, timeout=60)
    return target.read_bytes()


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    """A ``modelsDir`` holding the ``commands`` pocketsphinx model: just a grammar (the
    acoustic model, language model and dictionary stay the bundled English ones)."""
    root = tmp_path / "models"
    model = root / "pocketsphinx" / "commands"
    model.mkdir(parents=True)
    (model / "commands.gram").write_text(GRAMMAR)
    return root
