"""Managed plugin sources: ``plugins/sources.json``, plugin id to acquisition source.

``config.json`` owns a managed plugin's active path and enabled state; this file stores only how
it was acquired: ``{"kind": "git", "remote": ...}`` or ``{"kind": "npm"}``. A record without
``kind`` is a Git source (older writers did not write it; it is written from now on). Older records
also carried selector, revision and checkout-root copies; they are accepted, kept as unknown
fields and not interpreted — installed revision and identity come from the managed layout.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, RootModel, Tag

from paseo_hookspecs.records._base import ROOT_CONFIG, RecordModel

__all__ = [
    "GitPluginSource",
    "NpmPluginSource",
    "PluginSource",
    "PluginSourceRecord",
    "PluginSourcesFile",
]


class GitPluginSource(RecordModel):
    """A plugin acquired by cloning the Git ``remote``."""

    ALWAYS_EMIT: ClassVar[frozenset[str]] = frozenset({"kind"})

    kind: Literal["git"] = "git"
    remote: Annotated[str, Field(min_length=1)]


class NpmPluginSource(RecordModel):
    """A plugin acquired as an npm package (the package identity lives in its artifacts)."""

    kind: Literal["npm"]


def _source_kind(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("kind", "git")
    return getattr(value, "kind", None)


PluginSourceRecord = Annotated[
    Annotated[GitPluginSource, Tag("git")] | Annotated[NpmPluginSource, Tag("npm")],
    Discriminator(_source_kind),
]
"""How one managed plugin was acquired (one value of ``sources.json``), discriminated on
``kind`` (absent means ``git``)."""

PluginSource = PluginSourceRecord
"""Alias of :data:`PluginSourceRecord`."""


class PluginSourcesFile(RootModel[dict[str, PluginSourceRecord]]):
    """The whole ``plugins/sources.json`` map, keyed by plugin id."""

    model_config = ROOT_CONFIG
