"""Speech: the engine each use site (dictation, voice mode's STT and TTS) uses, whether its
driver is installed (its extra, e.g. ``paseo[speech]``, may be missing: the install command is
said), and the model it is set to.

Engines are drivers found by entry-point metadata; nothing of them is imported here (a driver
whose extra is missing must not be: its import fails), so the models are checked as far as the
configuration names them: a model under ``providers.local.modelsDir`` needs that directory.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from paseo.doctor.model import Check, DoctorContext

GROUP = "speech"


def _drivers() -> dict[tuple[str, str], Any]:
    """``(group, name) -> PluginRecord`` of every installed speech driver."""
    from paseo_hookspecs import STT_GROUP, TTS_GROUP

    from paseo.plugins.drivers import driver_records

    return {
        (record.kind, record.name): record
        for record in driver_records()
        if record.kind in (STT_GROUP, TTS_GROUP)
    }


def _site_check(site: str, path: str, group: str, settings: dict[str, Any], drivers: Any) -> Check:
    name = str(settings.get("provider") or "")
    record = drivers.get((group, name))
    model = settings.get("model")
    model_text = f"model {model}" if model else "its bundled model"
    if record is None:
        installed = sorted(n for g, n in drivers if g == group) or ["none"]
        return Check(
            GROUP,
            site,
            "fail",
            f"{path}.provider is {name!r}, which is not an installed engine "
            f"(installed: {', '.join(installed)})",
            f"`paseo config set {path}.provider {installed[0]}`, or install the plugin that "
            f"provides {name!r}",
        )
    if record.unavailable is not None:
        return Check(
            GROUP,
            site,
            "warn",
            f"{path} uses {name!r}, which is {record.unavailable.message}",
            record.unavailable.command,
        )
    if model:
        models_dir = settings.get("modelsDir")
        if not models_dir:
            return Check(
                GROUP,
                site,
                "fail",
                f"{path} names model {model!r} but providers.local.modelsDir is not set",
                "`paseo config set providers.local.modelsDir /path/to/models` (models are "
                "never downloaded: put them there)",
            )
        base = Path(str(models_dir)).expanduser()
        if not base.is_dir():
            return Check(
                GROUP,
                site,
                "fail",
                f"{path} names model {model!r} but providers.local.modelsDir ({base}) is not "
                "a directory",
                f"mkdir -p {shlex.quote(str(base))} and put the model there",
            )
    return Check(GROUP, site, "ok", f"{path}: engine {name!r} installed, {model_text}")


def checks(context: DoctorContext) -> list[Check]:
    from paseo.config import load_config
    from paseo.speech.engines import SITES, site_settings

    loaded = load_config(context.layout.config, context.env, home=context.home)
    drivers = _drivers()
    results = [
        _site_check(site, path, group, site_settings(loaded.resolved, site), drivers)
        for site, (group, path) in SITES.items()
    ]
    missing = {
        record.unavailable.command for record in drivers.values() if record.unavailable is not None
    }
    for command in sorted(missing):
        names = sorted(
            name
            for (_g, name), record in drivers.items()
            if record.unavailable is not None and record.unavailable.command == command
        )
        results.append(
            Check(
                GROUP,
                "extras",
                "warn",
                f"installed but not usable without their extra: {', '.join(names)}",
                command,
            )
        )
    return results
