"""Where the local engines find models: bundled ones, or directories under ``modelsDir``.

Nothing is ever downloaded. The pocketsphinx wheel ships a US English acoustic model,
language model and dictionary; espeak-ng brings its own voices. Anything else is a directory
the user puts under ``providers.local.modelsDir``:

``<modelsDir>/pocketsphinx/<model>/``
    ``hmm/`` (an acoustic model directory), ``*.lm.bin`` or ``*.lm`` (a language model),
    ``*.dict`` (a pronunciation dictionary), ``*.gram`` or ``*.jsgf`` (a JSGF grammar: when
    present, recognition is restricted to it). Each missing piece falls back to the bundled
    English one.
``<modelsDir>/espeak-ng/<model>/``
    an espeak-ng data directory (passed as ``--path``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paseo_hookspecs.errors import Unavailable


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


def model_directory(settings: Mapping[str, Any], engine: str) -> Path | None:
    """``<modelsDir>/<engine>/<model>`` for the site's ``model``; ``None`` for the bundled one.

    Raises :class:`Unavailable` naming the path when the directory is missing.
    """
    name = settings.get("model")
    if not name:
        return None
    models_dir = settings.get("modelsDir")
    if not models_dir:
        raise Unavailable(f"{engine} model {name!r} needs providers.local.modelsDir")
    directory = Path(str(models_dir)).expanduser() / engine / str(name)
    if not directory.is_dir():
        raise Unavailable(
            f"{engine} model {name!r} not found at {directory} "
            "(models are never downloaded: put it there)"
        )
    return directory


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
