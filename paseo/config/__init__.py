"""``$PASEO_HOME/config.json``: its schema, legacy migration, loading and effective values.

The CLI imports this lazily: it pulls in pydantic, which ``paseo --help`` should not pay for.
"""

from paseo.config.jsonpath import format_path, get_path, parse_path
from paseo.config.legacy import migrate
from paseo.config.load import (
    ConfigError,
    LoadedConfig,
    WriteResult,
    load_config,
    parse_value,
    patch,
    patch_file,
    read_document,
    set_path,
    validate_file,
)
from paseo.config.models import PaseoConfig
from paseo.config.problems import ConfigProblem
from paseo.config.resolved import DEFAULT_TERMINAL_PROFILES, ResolvedConfig, resolve

__all__ = [
    "DEFAULT_TERMINAL_PROFILES",
    "ConfigError",
    "ConfigProblem",
    "LoadedConfig",
    "PaseoConfig",
    "ResolvedConfig",
    "WriteResult",
    "format_path",
    "get_path",
    "load_config",
    "migrate",
    "parse_path",
    "parse_value",
    "patch",
    "patch_file",
    "read_document",
    "resolve",
    "set_path",
    "validate_file",
]
