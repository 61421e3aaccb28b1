"""The Paseo plugin contract.

Third-party plugins depend on this package alone: it holds the pluggy markers, the hook
specifications, the objects that hooks hand over, the abstract interfaces plugins implement and
the pydantic models that cross the boundary. Importing it never imports the daemon.

A plugin is a module (or class instance) with functions decorated by :data:`hookimpl`, registered
through an entry point in the ``paseo`` group::

    [project.entry-points.paseo]
    my-plugin = "my_plugin.plugin"

Named drivers (exactly one chosen by configuration) use their own groups: :data:`STORE_GROUP`,
:data:`STT_GROUP` and :data:`TTS_GROUP`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pluggy

PROJECT_NAME = "paseo"
"""The pluggy project name; every hook is named ``paseo_*``."""

HOOK_GROUP = "paseo"
"""Entry-point group of hook plugins."""

STORE_GROUP = "paseo.store"
"""Entry-point group of store drivers (one is chosen by ``storage.driver``)."""

STT_GROUP = "paseo.speech.stt"
"""Entry-point group of speech-to-text engines (one per use site)."""

TTS_GROUP = "paseo.speech.tts"
"""Entry-point group of text-to-speech engines (one per use site)."""

DRIVER_GROUPS = (STORE_GROUP, STT_GROUP, TTS_GROUP)

hookspec: pluggy.HookspecMarker
hookimpl: pluggy.HookimplMarker


def __getattr__(name: str) -> Any:
    # The markers are built on first use so that importing the constants or
    # ``paseo_hookspecs.errors`` (every CLI command does) does not pay for importing pluggy.
    if name in ("hookspec", "hookimpl"):
        import pluggy

        markers = {
            "hookspec": pluggy.HookspecMarker(PROJECT_NAME),
            "hookimpl": pluggy.HookimplMarker(PROJECT_NAME),
        }
        globals().update(markers)
        return markers[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DRIVER_GROUPS",
    "HOOK_GROUP",
    "PROJECT_NAME",
    "STORE_GROUP",
    "STT_GROUP",
    "TTS_GROUP",
    "hookimpl",
    "hookspec",
]
