"""The default local engine through the real daemon and CLI: ``paseo speech say`` speaks
everyday commands, ``paseo speech transcribe`` hears them free-form (Whisper tiny.en, no
grammar, no configuration), and ``paseo dictate`` of the same audio gives the same transcript.

One test, one daemon: the engine's worker loads the model once for every phrase.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import RunPaseo

PHRASES = ["show me the last error message", "cancel the current task", "turn on the light"]


def words(text: str) -> list[str]:
    return re.sub(r"[^a-z0-9' ]+", " ", text.lower()).split()


def test_say_transcribe_and_dictate_agree_with_the_default_engine(
    daemon_factory: Callable[..., Any], run_paseo: RunPaseo, tmp_path: Path
) -> None:
    daemon_factory()  # no configuration: every site is `local`, the model the bundled one
    exact = 0
    for index, phrase in enumerate(PHRASES):
        audio = tmp_path / f"phrase{index}.wav"
        run_paseo("speech", "say", phrase, "--save", str(audio), check=True)
        heard = run_paseo("speech", "transcribe", str(audio), "-o", "json", timeout=120, check=True)
        result = json.loads(heard.stdout)
        assert result["engine"] == "local"
        exact += words(result["text"]) == phrase.split()
        dictated = run_paseo("dictate", str(audio), "-o", "json", timeout=120, check=True)
        assert json.loads(dictated.stdout)["text"] == result["text"], phrase
    assert exact >= len(PHRASES) - 1
