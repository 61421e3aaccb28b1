"""Reading, validating and changing ``config.json``.

Reading is tolerant where it is safe to be: legacy shapes are migrated (see
:mod:`paseo.config.legacy`) and keys this version does not know, written by a newer Paseo,
are dropped from the loaded view with a warning naming their path. Anything else wrong (bad
JSON, a wrong type, a bad value) raises :class:`ConfigError` naming the file, the JSON path
and the problem. Loading never writes the file, so a failed parse cannot damage it.

Writing is strict. :func:`set_path` and :func:`patch_file` read the raw document, migrate it,
apply only the requested change, validate the whole result and replace the file atomically
(mode 0600: it may hold credentials). They write the raw document, not a model dump, so
defaults and environment overrides never leak into the file. Unknown keys already in the file
(another version's settings) are kept untouched and the change is made around them; a change
that adds or alters an unknown key is refused, since this version cannot describe it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from paseo.config.jsonpath import (
    PathError,
    Segment,
    delete_path_in,
    format_path,
    get_path,
    parse_path,
    set_path_in,
)
from paseo.config.legacy import migrate, migrate_moved, normalize_speech_sites
from paseo.config.models import PaseoConfig, PathedValueError
from paseo.config.problems import ConfigError, ConfigProblem
from paseo.config.raw import document_limit_problem, raw_limit_problem, read_document, read_raw
from paseo.config.resolution import env_problems, resolve
from paseo.config.resolved import ResolvedConfig
from paseo.config.sites import SPEECH_SITES
from paseo.fs import atomic_write_json
from paseo.redaction.settings import RedactionConfig

CONFIG_FILE_MODE = 0o600
_MAX_UNKNOWN_KEY_PASSES = 8


@dataclass(frozen=True)
class LoadedConfig:
    """One read of ``config.json``: what it says, and what the daemon should use."""

    path: Path
    exists: bool
    document: dict[str, Any]
    """The raw document after migration, minus unknown keys: what :attr:`config` parsed."""
    config: PaseoConfig
    resolved: ResolvedConfig
    warnings: tuple[ConfigProblem, ...] = ()

    @property
    def env_overrides(self) -> dict[str, str]:
        """Config path -> environment variable, for the overrides applied at launch."""
        return dict(self.resolved.envOverrides)

    @property
    def plugins_enabled(self) -> bool:
        """``pluginsEnabled``: whether user-installed plugins may load."""
        return self.resolved.pluginsEnabled

    @property
    def plugin_entries(self) -> dict[str, dict[str, Any]]:
        """The ``plugins`` entries as plain data, holding only the keys the file sets."""
        return {
            plugin_id: entry.model_dump(mode="json", exclude_unset=True)
            for plugin_id, entry in self.resolved.plugins.items()
        }

    @property
    def store_driver(self) -> str:
        """Name of the store driver to open (``storage.driver``, ``json`` by default)."""
        return self.resolved.storage.driver

    @property
    def redaction(self) -> RedactionConfig:
        """``daemon.redaction`` with its defaults (on, built-in patterns, the environment)."""
        daemon = self.config.daemon
        return (daemon.redaction if daemon else None) or RedactionConfig()

    def logging(self, *, foreground: bool) -> dict[str, Any]:
        """Keyword arguments for :func:`paseo.logs.configure_logging`.

        The console gets records only when the daemon runs in the foreground.
        """
        log = self.resolved.log
        return {
            "file_path": Path(log.file.path),
            "file_level": log.file.level,
            "file_format": log.format,
            "max_bytes": parse_size(log.file.rotate.maxSize),
            "backups": log.file.rotate.maxFiles,
            "console_level": log.console.level if foreground else None,
            "console_format": log.console.format,
        }


_SIZE = re.compile(r"^\s*(\d+)\s*([bkmg])?b?\s*$", re.IGNORECASE)
_UNITS = {"b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def parse_size(text: str, default: int = 10 * 1024**2) -> int:
    """Bytes in a log size such as ``"10m"``, ``"512k"`` or ``"10MB"`` (a bare number is
    megabytes); ``default`` when it does not parse."""
    match = _SIZE.match(text)
    if match is None or int(match[1]) == 0:
        return default
    return int(match[1]) * _UNITS[(match[2] or "m").lower()]


@dataclass(frozen=True)
class WriteResult:
    """What a successful change wrote."""

    path: Path
    document: dict[str, Any]
    config: PaseoConfig
    warnings: tuple[ConfigProblem, ...] = ()


# --- reading -----------------------------------------------------------------------------------


NEW_HOME_CONFIG: dict[str, Any] = {"version": 1, "daemon": {"relay": {"enabled": False}}}
"""What a daemon's first start writes when the home has no config.json: the relay off until
the user turns it on. Materialized rather than left to the default because the TypeScript
daemon, which may serve the same home, defaults ``daemon.relay.enabled`` to true."""


def materialize_new_home(path: Path) -> bool:
    """Write :data:`NEW_HOME_CONFIG` (0600, atomically) when ``path`` does not exist; whether
    it was written. Only keys the TypeScript daemon's strict ``daemon.relay`` schema accepts."""
    if path.exists() or path.is_symlink():
        return False
    atomic_write_json(path, NEW_HOME_CONFIG, mode=CONFIG_FILE_MODE)
    return True


def load_config(
    path: Path, env: Mapping[str, str] | None = None, *, home: Path | None = None
) -> LoadedConfig:
    """Read, migrate and validate ``path`` and resolve it against ``env``.

    A missing file means all defaults. ``home`` (the state root relative paths and default
    locations resolve against) defaults to the file's directory; ``env`` to ``os.environ``.
    """
    raw = read_raw(path)
    migrated, warnings = migrate(raw or {})
    config, document, dropped = _validate(path, migrated, refuse_unknown=False)
    return LoadedConfig(
        path=path,
        exists=raw is not None,
        document=document,
        config=config,
        resolved=resolve(config, env, home=home if home is not None else path.parent),
        warnings=(*warnings, *dropped),
    )


def load_for_startup(
    path: Path, env: Mapping[str, str] | None = None, *, home: Path | None = None
) -> LoadedConfig:
    """:func:`load_config`, then every check start-up makes once plugins are loaded (see
    :func:`paseo.config.startup.startup_problems`).

    Raises :class:`ConfigError` when the daemon could not start with this file; warnings
    (an unknown ``extends``) are added to :attr:`LoadedConfig.warnings`.
    """
    from paseo.config.startup import startup_problems

    loaded = load_config(path, env, home=home)
    problems = startup_problems(loaded.config, loaded.resolved, _environ(env))
    errors = [problem for problem in problems if problem.severity == "error"]
    if errors:
        raise ConfigError(path, problems)
    return dataclasses.replace(loaded, warnings=(*loaded.warnings, *problems))


def validate_file(path: Path, env: Mapping[str, str] | None = None) -> list[ConfigProblem]:
    """Every problem with ``path`` as start-up would find them with ``env``: errors, plus
    warnings for migrated and unknown keys; environment variables that cannot be used are
    errors naming the variable.

    A missing file has no problems of its own (defaults apply).
    """
    from paseo.config.startup import startup_problems

    environ = _environ(env)
    try:
        raw = read_raw(path)
    except ConfigError as error:
        return list(error.problems)
    migrated, warnings = migrate(raw or {})
    try:
        config, _, dropped = _validate(path, migrated, refuse_unknown=False)
    except ConfigError as error:
        return [*warnings, *error.problems]
    resolved = resolve(config, environ, home=path.parent)
    return [
        *warnings,
        *dropped,
        *env_problems(config, environ, home=path.parent),
        *startup_problems(config, resolved, environ),
    ]


def _environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


# --- validation ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Issue:
    segments: tuple[Segment, ...]
    message: str
    unknown_key: bool


def _validate(
    file: Path | None, document: dict[str, Any], *, refuse_unknown: bool
) -> tuple[PaseoConfig, dict[str, Any], list[ConfigProblem]]:
    """Validate ``document``; returns the model, the document it parsed, and warnings.

    Unknown keys are errors with ``refuse_unknown``, otherwise they are removed (and
    reported as warnings) and validation runs again on what is left.
    """
    dropped: list[ConfigProblem] = []
    if not document:
        # Nothing to check (no file, or ``{}``): skip building the validators of the whole
        # schema, the largest part of a first start's configuration cost.
        return PaseoConfig.model_construct(), document, dropped
    for _ in range(_MAX_UNKNOWN_KEY_PASSES):
        try:
            return PaseoConfig.model_validate(document), document, dropped
        except ValidationError as error:
            issues = _issues(error, document)
        unknown = [issue for issue in issues if issue.unknown_key]
        if refuse_unknown:
            raise ConfigError(file, _unique(issues)) from None
        for issue in unknown:
            document = delete_path_in(document, issue.segments)
            dropped.append(
                ConfigProblem(
                    format_path(issue.segments),
                    "unknown key ignored (written by a newer Paseo?)",
                    "warning",
                )
            )
        if len(unknown) < len(issues):
            errors = [issue for issue in issues if not issue.unknown_key]
            raise ConfigError(file, [*_unique(errors), *dropped]) from None
    raise ConfigError(file, [ConfigProblem("(root)", "too many unknown keys")])


def _unique(issues: list[_Issue]) -> list[ConfigProblem]:
    problems: dict[tuple[str, str], ConfigProblem] = {}
    for issue in issues:
        problem = ConfigProblem(format_path(issue.segments), issue.message)
        problems.setdefault((problem.path, problem.message), problem)
    return list(problems.values())


def _issues(error: ValidationError, document: Mapping[str, Any]) -> list[_Issue]:
    issues: list[_Issue] = []
    for detail in error.errors():
        segments = _locate(detail["loc"], document)
        kind = detail["type"]
        cause = (detail.get("ctx") or {}).get("error")
        if isinstance(cause, PathedValueError):
            segments = (*segments, *cause.subpath)
            message = cause.message
        elif kind == "extra_forbidden":
            message = "unknown key"
        elif kind == "missing":
            message = "required"
        else:
            message = detail["msg"].removeprefix("Value error, ")
        if detail["loc"] and detail["loc"][-1] == "[key]":
            message = f"invalid key: {message}"
        issues.append(_Issue(segments, message, kind == "extra_forbidden"))
    return issues


def _locate(loc: tuple[int | str, ...], document: Mapping[str, Any]) -> tuple[Segment, ...]:
    """The JSON path of a pydantic error location.

    Pydantic inserts entries that are not in the document: the tag of a discriminated union
    (``"openai"``), the member of a plain union (``"list[str]"``) and ``"[key]"`` for a bad
    dict key. Walking the document alongside the location tells them apart.
    """
    path: list[Segment] = []
    current: Any = document
    for segment in loc:
        if segment == "[key]":
            continue
        if isinstance(current, dict):
            if isinstance(segment, str) and segment in current:
                path.append(segment)
                current = current[segment]
            elif segment in (current.get("provider"), current.get("mode")):
                continue
            else:
                # A key the document lacks: a required field. Nothing deeper exists.
                path.append(segment)
                break
        elif isinstance(current, list):
            if isinstance(segment, int) and 0 <= segment < len(current):
                path.append(segment)
                current = current[segment]
            elif not isinstance(segment, int):
                continue
            else:
                path.append(segment)
                break
        else:
            break
    return tuple(path)


# --- writing -----------------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A command-line value: JSON when it parses as JSON, otherwise the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def update_file(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]]) -> WriteResult:
    """Apply ``change`` to the migrated raw document of ``path``, validate, write atomically.

    ``change`` gets a private copy and returns the new document. Nothing is written when the
    result is invalid, holds unknown keys, or would stop the next daemon start (see
    :func:`paseo.config.startup.startup_problems`; its warnings are returned).
    """
    from paseo.config.startup import startup_problems

    migrated, warnings = read_document(path)
    document = change(migrated)
    if not isinstance(document, dict):
        raise ConfigError(path, [ConfigProblem("(root)", "expected a JSON object")])
    limit = document_limit_problem(document)
    if limit is not None:
        raise ConfigError(path, [limit])
    # A change made at a setting's old place is written at its new one.
    migrate_moved(document, [], old_wins=True)
    # A site written without a provider is a local one, and provider names are canonical;
    # keys the chosen provider ignores are an error here, not silently dropped.
    normalize_speech_sites(document, [], discard_foreign=False)
    config, _, kept = _validate(path, document, refuse_unknown=False)
    _refuse_new_unknown_keys(path, migrated, document, kept)
    _refuse_typescript_rejected(path, migrated, document)
    problems = startup_problems(config, resolve(config, home=path.parent), os.environ)
    if any(problem.severity == "error" for problem in problems):
        raise ConfigError(path, problems)
    warnings = (*warnings, *kept, *problems)
    atomic_write_json(path, document, mode=CONFIG_FILE_MODE)
    return WriteResult(path=path, document=document, config=config, warnings=warnings)


TYPESCRIPT_RELAY_KEYS = frozenset({"enabled", "endpoint", "publicEndpoint"})
"""What the TypeScript daemon's strict ``daemon.relay`` schema accepts: any other key there
makes it (and its CLI, ``paseo daemon pair`` included) refuse the whole home."""


def _refuse_typescript_rejected(file: Path, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Refuse a change that adds or alters a ``daemon.relay`` key the TypeScript Paseo rejects
    (``useTls``, ``publicUseTls``: read when present, never written)."""

    def relay_of(document: dict[str, Any]) -> dict[str, Any]:
        daemon = document.get("daemon")
        relay = daemon.get("relay") if isinstance(daemon, dict) else None
        return relay if isinstance(relay, dict) else {}

    old, new = relay_of(before), relay_of(after)
    changed = sorted(
        key for key in new if key not in TYPESCRIPT_RELAY_KEYS and new[key] != old.get(key, ...)
    )
    if changed:
        raise ConfigError(
            file,
            [
                ConfigProblem(
                    f"daemon.relay.{key}",
                    "not written: the TypeScript Paseo refuses a config.json with this key "
                    "(TLS is used for exactly relay.paseo.sh:443)",
                )
                for key in changed
            ],
        )


def _refuse_new_unknown_keys(
    file: Path, before: dict[str, Any], after: dict[str, Any], unknown: list[ConfigProblem]
) -> None:
    """Refuse a change that adds or alters a key this version does not know.

    Unknown keys already in the file (written by a newer or the TypeScript Paseo) are kept as
    they are and the change is made around them: refusing every change because of them would
    leave such a home un-patchable, and dropping them would lose another version's settings.
    """
    added = []
    for problem in unknown:
        segments = parse_path(problem.path)
        try:
            unchanged = get_path(before, segments) == get_path(after, segments)
        except KeyError:
            unchanged = False
        if not unchanged:
            added.append(ConfigProblem(problem.path, "unknown key"))
    if added:
        raise ConfigError(file, added)


def set_path(path: Path, key: str, value: Any, *, literal: bool = False) -> WriteResult:
    """Set ``key`` (a JSON path such as ``daemon.git.maxProcessConcurrency``) in ``path``.

    A ``str`` value is parsed with :func:`parse_value` unless ``literal``. ``None`` (JSON
    ``null``) removes the key. Only that key changes; the whole result must validate.
    """
    try:
        segments = parse_path(key)
    except PathError as error:
        raise ConfigError(path, [ConfigProblem(key or "(root)", str(error))]) from error
    if not segments:
        raise ConfigError(path, [ConfigProblem("(root)", "a path is required")])
    if isinstance(value, str) and not literal:
        limit = raw_limit_problem(value.encode("utf-8", "surrogatepass"))
        if limit is not None:
            raise ConfigError(path, [ConfigProblem(key, limit.message)])
        value = parse_value(value)

    def change(document: dict[str, Any]) -> dict[str, Any]:
        try:
            if value is None:
                return delete_path_in(document, segments)
            if _DISCRIMINATED.get(tuple(map(str, segments[:-1]))) == segments[-1]:
                # Changing a speech site's provider (or a skill selection's mode) replaces
                # the object, exactly as a patch does.
                nested: Any = value
                for segment in reversed(segments):
                    nested = {segment: nested}
                return patch(document, nested)
            return set_path_in(document, segments, value)
        except PathError as error:
            raise ConfigError(path, [ConfigProblem(format_path(segments), str(error))]) from error

    return update_file(path, change)


def patch_file(path: Path, changes: Mapping[str, Any]) -> WriteResult:
    """Deep-merge ``changes`` into ``path`` (see :func:`patch`), validate and write."""
    # Merging recurses once per level: refuse a patch too deep before walking it.
    limit = document_limit_problem(dict(changes))
    if limit is not None:
        raise ConfigError(path, [limit])
    return update_file(path, lambda document: patch(document, changes))


# --- merging -----------------------------------------------------------------------------------

# Objects whose shape is chosen by one key: when a patch changes that key, the object is
# replaced, not merged, so settings of the previous variant (an API key) cannot survive.
_DISCRIMINATED: dict[tuple[str, ...], str] = {
    **dict.fromkeys(SPEECH_SITES, "provider"),
    ("agents", "skills", "selection"): "mode",
}


def patch(raw: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``raw`` with ``changes`` deep-merged in; neither input is modified.

    Objects merge key by key; lists and scalars replace (``terminalProfiles`` is always sent
    whole); ``None`` removes a key. An object whose discriminator (a speech site's
    ``provider``, a skill selection's ``mode``) changes is replaced whole.
    """
    return _merge(raw, changes, ())


def _merge(
    base: Mapping[str, Any], changes: Mapping[str, Any], at: tuple[str, ...]
) -> dict[str, Any]:
    result = dict(base)
    for key, value in changes.items():
        here = (*at, key)
        current = result.get(key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(current, Mapping):
            discriminator = _DISCRIMINATED.get(here)
            replaced = (
                discriminator is not None
                and discriminator in value
                and value[discriminator] != current.get(discriminator)
            )
            base_object: Mapping[str, Any] = {} if replaced else current
            result[key] = _merge(base_object, value, here)
        elif isinstance(value, Mapping):
            result[key] = _merge({}, value, here)
        else:
            result[key] = copy.deepcopy(value)
    return result
