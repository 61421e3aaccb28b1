"""Plugin ids: their syntax, the default id of a fetched plugin, and built-in names."""

from __future__ import annotations

import re

from paseo_hookspecs import DRIVER_GROUPS, HOOK_GROUP
from paseo_hookspecs.errors import Conflict, InvalidParams

PLUGIN_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
"""What ``paseo plugins install`` accepts: it names a directory and a config.json key."""

_MAX_LENGTH = 64


def validate_plugin_id(plugin_id: str) -> str:
    """Return ``plugin_id`` or raise :class:`InvalidParams` explaining the rule."""
    if len(plugin_id) > _MAX_LENGTH or not PLUGIN_ID.match(plugin_id):
        raise InvalidParams(
            f"invalid plugin id {plugin_id!r}: use lowercase letters, digits and '-', starting "
            f"with a letter or digit (at most {_MAX_LENGTH} characters)"
        )
    return plugin_id


def default_plugin_id(name: str) -> str:
    """A valid id derived from a package, project or repository name (``@acme/My_Agent`` ->
    ``my-agent``); raise :class:`InvalidParams` when nothing usable is left."""
    base = name.rsplit("/", 1)[-1].removesuffix(".git").lower()
    candidate = re.sub(r"[^a-z0-9]+", "-", base).strip("-")[:_MAX_LENGTH].rstrip("-")
    if not candidate or not PLUGIN_ID.match(candidate):
        raise InvalidParams(f"cannot derive a plugin id from {name!r}; pass --id")
    return candidate


def builtin_names() -> set[str]:
    """Ids a managed plugin may not take: built-in hook plugins and every named driver."""
    from paseo.plugins.discovery import entry_point_candidates

    names = {c.name for c in entry_point_candidates(HOOK_GROUP) if c.builtin}
    for group in DRIVER_GROUPS:
        names.update(c.name for c in entry_point_candidates(group))
    return names


def check_not_builtin(plugin_id: str, *, allow_shadow: bool) -> None:
    """Raise :class:`Conflict` when ``plugin_id`` is a built-in's name (unless allowed)."""
    if not allow_shadow and plugin_id in builtin_names():
        raise Conflict(
            f"{plugin_id!r} is the id of a built-in plugin or driver; choose another id with "
            "--id, or pass --allow-builtin-shadow"
        )
