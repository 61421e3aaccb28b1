"""Which engine serves which use site, built from the configuration in force.

Each use site (``features.dictation.stt``, ``features.voiceMode.stt``,
``features.voiceMode.tts``) names its provider; the provider is the name of a driver in the
``paseo.speech.stt`` / ``paseo.speech.tts`` entry-point group, imported only when first used.
An engine receives the site's settings as a plain dict (the fields the config file sets, plus
``modelsDir`` from ``providers.local.modelsDir``), so third-party engines need no kernel model.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paseo_hookspecs import STT_GROUP, TTS_GROUP

if TYPE_CHECKING:
    from paseo_hookspecs.interfaces.speech import SpeechToText, TextToSpeech

    from paseo.config import ResolvedConfig
    from paseo.services import ConfigView

log = logging.getLogger("paseo.speech")

DriverLoader = Callable[[str, str], Any]
"""``(group, name) -> engine class``; :func:`paseo.plugins.drivers.load_driver` in the daemon."""

SITES: dict[str, tuple[str, str]] = {
    "dictation": (STT_GROUP, "features.dictation.stt"),
    "voiceMode": (STT_GROUP, "features.voiceMode.stt"),
    "voiceMode.tts": (TTS_GROUP, "features.voiceMode.tts"),
}
"""Use site -> (driver group, config path of its settings)."""


@dataclass(frozen=True)
class Choice:
    """The engine a site uses now: the driver name and the settings it is built with."""

    group: str
    name: str
    settings: dict[str, Any]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.group, self.name, json.dumps(self.settings, sort_keys=True))


def site_settings(resolved: ResolvedConfig, site: str) -> dict[str, Any]:
    """The settings of ``site`` as the engine receives them (``provider`` included)."""
    features = resolved.features
    model = {
        "dictation": features.dictation.stt,
        "voiceMode": features.voiceMode.stt,
        "voiceMode.tts": features.voiceMode.tts,
    }[site]
    settings: dict[str, Any] = model.model_dump(mode="json", exclude_none=True)
    settings["modelsDir"] = resolved.providers.local.modelsDir
    return settings


MAX_ENGINES = 8
"""Engines kept built at once (each site at most one per settings it had)."""


class Engines:
    """Builds engines on demand and keeps one per (driver, settings): a ``paseo reload`` that
    changes a site's settings gets a fresh engine, an unchanged site keeps its warm one."""

    def __init__(self, config: ConfigView, load: DriverLoader) -> None:
        self._config = config
        self._load = load
        self._built: dict[tuple[str, str, str], Any] = {}
        self._retired: list[Any] = []
        """Engines dropped from :attr:`_built`, closed by the next :meth:`close_retired`."""

    def choose(self, site: str, engine: str | None = None) -> Choice:
        """The driver for ``site``; ``engine`` picks another driver with the same settings
        (a third-party engine the strict config cannot name yet)."""
        group, _path = SITES[site]
        settings = site_settings(self._config.resolved, site)
        return Choice(group, engine or str(settings["provider"]), settings)

    def _engine(self, choice: Choice) -> Any:
        engine = self._built.get(choice.key)
        if engine is None:
            if len(self._built) >= MAX_ENGINES:
                # Oldest first: settings replaced by a reload are the ones nobody uses now.
                self._retired.append(self._built.pop(next(iter(self._built))))
            engine = self._load(choice.group, choice.name)(choice.settings)
            self._built[choice.key] = engine
        return engine

    def stt(self, choice: Choice) -> SpeechToText:
        engine: SpeechToText = self._engine(choice)
        return engine

    def tts(self, choice: Choice) -> TextToSpeech:
        engine: TextToSpeech = self._engine(choice)
        return engine

    async def close_retired(self) -> None:
        """Close the engines dropped to make room (their worker processes end)."""
        retired, self._retired = self._retired, []
        for engine in retired:
            await _close(engine)

    async def close(self) -> None:
        """Close every engine (the daemon stops)."""
        built, self._built = list(self._built.values()), {}
        await self.close_retired()
        for engine in built:
            await _close(engine)

    def sites(self) -> dict[str, str]:
        """Config path -> provider, for every use site."""
        resolved = self._config.resolved
        return {
            path: str(site_settings(resolved, site)["provider"])
            for site, (_group, path) in SITES.items()
        }


async def _close(engine: Any) -> None:
    close = getattr(engine, "aclose", None)
    if close is None:
        return  # an engine written against an older contract
    try:
        await close()
    except Exception:
        # A plugin's bug must not keep the other engines from closing.
        log.exception("closing the speech engine %s failed", type(engine).__name__)
