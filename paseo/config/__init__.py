"""``$PASEO_HOME/config.json``: its schema, legacy migration, loading and effective values.

Names are imported on first use (PEP 562): reading the raw file needs no pydantic, and
``paseo config get`` should not pay for building the models it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paseo.config.jsonpath import format_path, get_path, parse_path
    from paseo.config.legacy import migrate
    from paseo.config.load import (
        LoadedConfig,
        WriteResult,
        load_config,
        load_for_startup,
        parse_value,
        patch,
        patch_file,
        set_path,
        validate_file,
    )
    from paseo.config.models import PaseoConfig
    from paseo.config.problems import ConfigError, ConfigProblem
    from paseo.config.raw import read_document, read_raw
    from paseo.config.resolution import resolve
    from paseo.config.resolved import ResolvedConfig

_EXPORTS: dict[str, str] = {
    "format_path": "jsonpath",
    "get_path": "jsonpath",
    "parse_path": "jsonpath",
    "migrate": "legacy",
    "LoadedConfig": "load",
    "WriteResult": "load",
    "load_config": "load",
    "load_for_startup": "load",
    "parse_value": "load",
    "patch": "load",
    "patch_file": "load",
    "set_path": "load",
    "validate_file": "load",
    "PaseoConfig": "models",
    "ConfigError": "problems",
    "ConfigProblem": "problems",
    "read_document": "raw",
    "read_raw": "raw",
    "ResolvedConfig": "resolved",
    "resolve": "resolution",
}

__all__ = [
    "ConfigError",
    "ConfigProblem",
    "LoadedConfig",
    "PaseoConfig",
    "ResolvedConfig",
    "WriteResult",
    "format_path",
    "get_path",
    "load_config",
    "load_for_startup",
    "migrate",
    "parse_path",
    "parse_value",
    "patch",
    "patch_file",
    "read_document",
    "read_raw",
    "resolve",
    "set_path",
    "validate_file",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'paseo.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"paseo.config.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
