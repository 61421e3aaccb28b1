"""The effective configuration: the file's values, then defaults, then launch environment.

:func:`resolve` turns a :class:`~paseo.config.models.PaseoConfig` (what the file says) into a
:class:`ResolvedConfig` where every setting has a value. Environment variables are applied
here, on the resolved view only: they are never written back to ``config.json``, and
``ResolvedConfig.envOverrides`` records which config paths they decided and from which
variable.

Environment values that do not parse are ignored, as if unset, so a typo in a launch script
falls back to the file instead of stopping the daemon.

Absent and empty differ for ``daemon.terminalProfiles``: absent (``None``) means the profiles
the installed agent providers offer (the kernel names no agent program), ``[]`` means the user
removed them all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from paseo_hookspecs.terminals import TerminalProfile
from pydantic import BaseModel, ConfigDict, Field

from paseo.config.models import (
    AgentProfile,
    AllSkills,
    LocalStt,
    LocalTts,
    LocalTurnDetection,
    LogFormat,
    LogLevel,
    MetadataGenerationProvider,
    OpenAiStt,
    OpenAiTts,
    OpenAiTurnDetection,
    PaseoConfig,
    PluginEntry,
    ProviderOverride,
    ServicePortsConfig,
    SkillSelection,
    SttSite,
    TtsSite,
    TurnDetectionSite,
)

DEFAULT_LISTEN_HOST = "127.0.0.1"
DEFAULT_PORT = 6767
DEFAULT_RELAY_ENDPOINT = "relay.paseo.sh:443"
DEFAULT_APP_BASE_URL = "https://app.paseo.sh"
DEFAULT_TRUSTED_PROXIES: tuple[str, ...] = ("loopback",)
DEFAULT_GIT_MAX_PROCESSES_PER_SECOND = 64
DEFAULT_GIT_MAX_PROCESS_CONCURRENCY = 8
DEFAULT_LOG_LEVEL: LogLevel = "info"
DEFAULT_LOG_FORMAT: LogFormat = "pretty"
DEFAULT_LOG_FILENAME = "daemon.log"
DEFAULT_LOG_ROTATE_SIZE = "10m"
DEFAULT_LOG_ROTATE_FILES = 2
DEFAULT_STORAGE_DRIVER = "json"
DEFAULT_LOCAL_MODELS_SUBDIR = Path("models") / "local-speech"

_LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
_LOG_FORMATS = ("pretty", "json")
_TRUE_WORDS = ("1", "true", "yes", "on")
_FALSE_WORDS = ("0", "false", "no", "off")


class _Frozen(BaseModel):
    # Built by resolve() from values it has already checked and typed: instances are made
    # with model_construct, so the validators are built only if something validates one.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ResolvedMcp(_Frozen):
    enabled: bool
    injectIntoAgents: bool


class ResolvedGit(_Frozen):
    maxProcessesPerSecond: int
    maxProcessConcurrency: int


class ResolvedCors(_Frozen):
    allowedOrigins: tuple[str, ...]


class ResolvedRelay(_Frozen):
    enabled: bool
    endpoint: str
    publicEndpoint: str
    useTls: bool
    publicUseTls: bool


class ResolvedAuth(_Frozen):
    password: str | None
    """The bcrypt hash from ``config.json``, if any."""
    envPassword: str | None = Field(default=None, exclude=True, repr=False)
    """Plain password from ``PASEO_PASSWORD``; wins over ``password`` and is hashed by the
    daemon. Excluded from dumps so it is never printed or sent."""

    @property
    def required(self) -> bool:
        """Whether remote clients must authenticate."""
        return self.password is not None or self.envPassword is not None


class ResolvedDaemon(_Frozen):
    listen: str
    hostnames: Literal[True] | tuple[str, ...]
    """``True`` allows any Host header; a list adds to the always-allowed loopback names."""
    trustedProxies: Literal[True] | tuple[str, ...]
    mcp: ResolvedMcp
    git: ResolvedGit
    appendSystemPrompt: str
    terminalProfiles: tuple[TerminalProfile, ...] | None
    """``None`` when config.json has none: the installed providers offer theirs."""
    agentProfiles: tuple[AgentProfile, ...]
    cors: ResolvedCors
    relay: ResolvedRelay
    auth: ResolvedAuth


class ResolvedApp(_Frozen):
    baseUrl: str


class ResolvedWorktrees(_Frozen):
    root: str
    servicePorts: ServicePortsConfig | None


class ResolvedLocalSpeech(_Frozen):
    modelsDir: str


class ResolvedProviders(_Frozen):
    local: ResolvedLocalSpeech


class ResolvedSkills(_Frozen):
    selection: SkillSelection


class ResolvedMetadataGeneration(_Frozen):
    providers: tuple[MetadataGenerationProvider, ...]


class ResolvedAgents(_Frozen):
    skills: ResolvedSkills
    providers: dict[str, ProviderOverride]
    metadataGeneration: ResolvedMetadataGeneration


class ResolvedDictation(_Frozen):
    enabled: bool
    stt: SttSite


class ResolvedVoiceLlm(_Frozen):
    provider: str | None
    model: str | None


class ResolvedVoiceMode(_Frozen):
    enabled: bool
    llm: ResolvedVoiceLlm
    stt: SttSite
    turnDetection: TurnDetectionSite
    tts: TtsSite


class ResolvedFeatures(_Frozen):
    dictation: ResolvedDictation
    voiceMode: ResolvedVoiceMode


class ResolvedConsoleLog(_Frozen):
    level: LogLevel
    format: LogFormat


class ResolvedLogRotate(_Frozen):
    maxSize: str
    maxFiles: int


class ResolvedFileLog(_Frozen):
    level: LogLevel
    path: str
    rotate: ResolvedLogRotate


class ResolvedLog(_Frozen):
    level: LogLevel
    format: LogFormat
    console: ResolvedConsoleLog
    file: ResolvedFileLog


class ResolvedStorage(_Frozen):
    driver: str


class ResolvedConfig(_Frozen):
    """Every setting with a value; see the module docstring for precedence."""

    version: Literal[1] = 1
    daemon: ResolvedDaemon
    app: ResolvedApp
    worktrees: ResolvedWorktrees
    providers: ResolvedProviders
    agents: ResolvedAgents
    pluginsEnabled: bool
    plugins: dict[str, PluginEntry]
    features: ResolvedFeatures
    log: ResolvedLog
    storage: ResolvedStorage
    envOverrides: dict[str, str]
    """Config path -> the environment variable that decided it at launch."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (secrets from the environment excluded)."""
        return self.model_dump(mode="json", by_alias=True)


# --- environment parsing -------------------------------------------------------------------


class _Env:
    """Reads launch overrides and remembers which config paths they decided."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self.applied: dict[str, str] = {}

    def raw(self, name: str) -> str | None:
        """The trimmed value of ``name``; ``None`` when unset or blank."""
        value = self._env.get(name)
        if value is None or not value.strip():
            return None
        return value.strip()

    def record(self, path: str, name: str) -> None:
        """Note that variable ``name`` decided config ``path``."""
        self.applied[path] = name

    def text(self, path: str, *names: str) -> str | None:
        """The first non-empty variable of ``names``."""
        for name in names:
            value = self.raw(name)
            if value is not None:
                self.record(path, name)
                return value
        return None

    def boolean(self, path: str, name: str) -> bool | None:
        value = self.raw(name)
        parsed = _parse_bool(value)
        if parsed is not None:
            self.record(path, name)
        return parsed

    def positive_int(self, path: str, *names: str) -> int | None:
        for name in names:
            parsed = _parse_positive_int(self.raw(name))
            if parsed is not None:
                self.record(path, name)
                return parsed
        return None

    def choice(self, path: str, choices: tuple[str, ...], *names: str) -> str | None:
        for name in names:
            value = self.raw(name)
            if value is not None and value.lower() in choices:
                self.record(path, name)
                return value.lower()
        return None

    def string_list(self, path: str, *names: str) -> Literal[True] | list[str] | None:
        """A comma-separated list; ``true`` means "any"."""
        for name in names:
            value = self.raw(name)
            if value is None:
                continue
            self.record(path, name)
            if value.lower() == "true":
                return True
            return [item.strip() for item in value.split(",") if item.strip()]
        return None


def _parse_bool(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.lower()
    if lowered in _TRUE_WORDS:
        return True
    if lowered in _FALSE_WORDS:
        return False
    return None


def _parse_positive_int(value: str | None) -> int | None:
    """A whole number above zero (``"8"``, ``"8.0"``, ``"1e2"``); anything else is ignored."""
    if value is None or "_" in value:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    if not number.is_integer() or number <= 0:
        return None
    return int(number)


def _port(value: str | None) -> int | None:
    parsed = _parse_positive_int(value)
    return parsed if parsed is not None and parsed <= 65535 else None


# --- resolution ------------------------------------------------------------------------------


def _home_path(home: Path, value: str) -> str:
    # Relative paths in config.json are relative to $PASEO_HOME, not to the daemon's cwd.
    path = Path(os.path.expanduser(value))
    return str(path if path.is_absolute() else home / path)


def _dedupe(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(value.strip() for value in values if value.strip()))


def resolve(
    config: PaseoConfig, env: Mapping[str, str] | None = None, *, home: Path
) -> ResolvedConfig:
    """The effective configuration of ``config`` for a daemon whose state root is ``home``.

    ``env`` defaults to ``os.environ``; pass ``{}`` to resolve the file alone.
    """
    overrides = _Env(os.environ if env is None else env)
    resolved = ResolvedConfig.model_construct(
        daemon=_resolve_daemon(config, overrides),
        app=ResolvedApp.model_construct(
            baseUrl=overrides.text("app.baseUrl", "PASEO_APP_BASE_URL")
            or (config.app.baseUrl if config.app else None)
            or DEFAULT_APP_BASE_URL
        ),
        worktrees=_resolve_worktrees(config, home),
        providers=_resolve_providers(config, overrides, home),
        agents=_resolve_agents(config),
        # Third-party plugins load unless the file says `"pluginsEnabled": false`.
        pluginsEnabled=config.pluginsEnabled is not False,
        plugins=dict(config.plugins or {}),
        features=_resolve_features(config, overrides),
        log=_resolve_log(config, overrides, home),
        storage=ResolvedStorage.model_construct(
            driver=overrides.text("storage.driver", "PASEO_STORAGE_DRIVER")
            or (config.storage.driver if config.storage else None)
            or DEFAULT_STORAGE_DRIVER
        ),
        envOverrides={},
    )
    return resolved.model_copy(update={"envOverrides": dict(sorted(overrides.applied.items()))})


def _resolve_daemon(config: PaseoConfig, env: _Env) -> ResolvedDaemon:
    daemon = config.daemon
    git = daemon.git if daemon and daemon.git else None
    mcp = daemon.mcp if daemon and daemon.mcp else None
    relay = daemon.relay if daemon and daemon.relay else None
    auth = daemon.auth if daemon and daemon.auth else None

    listen = env.text("daemon.listen", "PASEO_LISTEN") or (daemon.listen if daemon else None)
    if not listen:
        port = _port(env.raw("PORT"))
        if port is not None:
            env.record("daemon.listen", "PORT")
        listen = f"{DEFAULT_LISTEN_HOST}:{port or DEFAULT_PORT}"

    # Hostname sources add up rather than replace each other; `true` from any source wins.
    env_hostnames = env.string_list("daemon.hostnames", "PASEO_HOSTNAMES", "PASEO_ALLOWED_HOSTS")
    file_hostnames = daemon.hostnames if daemon else None
    hostnames: Literal[True] | tuple[str, ...]
    if file_hostnames is True or env_hostnames is True:
        hostnames = True
    else:
        hostnames = _dedupe([*(file_hostnames or []), *(env_hostnames or [])])

    trusted: Literal[True] | tuple[str, ...]
    env_trusted = _trusted_proxies_env(env)
    file_trusted = daemon.trustedProxies if daemon else None
    chosen = env_trusted if env_trusted is not None else file_trusted
    if chosen is True:
        trusted = True
    elif chosen is None:
        trusted = DEFAULT_TRUSTED_PROXIES
    else:
        trusted = tuple(chosen)

    # CORS origins from the environment are added to the file's, never replace them.
    env_origins = env.string_list("daemon.cors.allowedOrigins", "PASEO_CORS_ORIGINS")
    file_origins = daemon.cors.allowedOrigins if daemon and daemon.cors else None
    origins = _dedupe(
        [*(file_origins or []), *(env_origins if isinstance(env_origins, list) else [])]
    )

    endpoint = (
        env.text("daemon.relay.endpoint", "PASEO_RELAY_ENDPOINT")
        or (relay.endpoint if relay else None)
        or DEFAULT_RELAY_ENDPOINT
    )
    use_tls = _first_bool(
        env.boolean("daemon.relay.useTls", "PASEO_RELAY_USE_TLS"),
        relay.useTls if relay else None,
        # Only the hosted relay is known to speak TLS; a self-hosted one is asked explicitly.
        endpoint == DEFAULT_RELAY_ENDPOINT,
    )
    terminal_profiles = daemon.terminalProfiles if daemon else None

    return ResolvedDaemon.model_construct(
        listen=listen,
        hostnames=hostnames,
        trustedProxies=trusted,
        mcp=ResolvedMcp.model_construct(
            enabled=_first_bool(mcp.enabled if mcp else None, True),
            injectIntoAgents=_first_bool(mcp.injectIntoAgents if mcp else None, True),
        ),
        git=ResolvedGit.model_construct(
            maxProcessesPerSecond=env.positive_int(
                "daemon.git.maxProcessesPerSecond", "PASEO_GIT_MAX_PROCESSES_PER_SECOND"
            )
            or (git.maxProcessesPerSecond if git else None)
            or DEFAULT_GIT_MAX_PROCESSES_PER_SECOND,
            # The new name wins over the legacy alias when both are set.
            maxProcessConcurrency=env.positive_int(
                "daemon.git.maxProcessConcurrency",
                "PASEO_GIT_MAX_PROCESS_CONCURRENCY",
                "PASEO_GIT_CONCURRENCY",
            )
            or (git.maxProcessConcurrency if git else None)
            or DEFAULT_GIT_MAX_PROCESS_CONCURRENCY,
        ),
        appendSystemPrompt=(daemon.appendSystemPrompt if daemon else None) or "",
        terminalProfiles=None if terminal_profiles is None else tuple(terminal_profiles),
        agentProfiles=tuple((daemon.agentProfiles if daemon else None) or ()),
        cors=ResolvedCors.model_construct(allowedOrigins=origins),
        relay=ResolvedRelay.model_construct(
            enabled=_first_bool(
                env.boolean("daemon.relay.enabled", "PASEO_RELAY_ENABLED"),
                relay.enabled if relay else None,
                False,
            ),
            endpoint=endpoint,
            publicEndpoint=env.text("daemon.relay.publicEndpoint", "PASEO_RELAY_PUBLIC_ENDPOINT")
            or (relay.publicEndpoint if relay else None)
            or endpoint,
            useTls=use_tls,
            publicUseTls=_first_bool(
                env.boolean("daemon.relay.publicUseTls", "PASEO_RELAY_PUBLIC_USE_TLS"),
                relay.publicUseTls if relay else None,
                use_tls,
            ),
        ),
        auth=ResolvedAuth.model_construct(
            password=auth.password if auth else None,
            envPassword=env.text("daemon.auth.password", "PASEO_PASSWORD"),
        ),
    )


def _trusted_proxies_env(env: _Env) -> Literal[True] | list[str] | None:
    value = env.raw("PASEO_TRUSTED_PROXIES")
    if value is None:
        return None
    env.record("daemon.trustedProxies", "PASEO_TRUSTED_PROXIES")
    parsed = _parse_bool(value)
    if parsed is True:
        return True
    if parsed is False:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def _first_bool(*values: bool | None) -> bool:
    for value in values:
        if value is not None:
            return value
    return False


def _resolve_worktrees(config: PaseoConfig, home: Path) -> ResolvedWorktrees:
    worktrees = config.worktrees
    root = worktrees.root if worktrees else None
    return ResolvedWorktrees.model_construct(
        root=_home_path(home, root) if root else str(home / "worktrees"),
        servicePorts=worktrees.servicePorts if worktrees else None,
    )


def _resolve_providers(config: PaseoConfig, env: _Env, home: Path) -> ResolvedProviders:
    local = config.providers.local if config.providers else None
    models_dir = env.text("providers.local.modelsDir", "PASEO_LOCAL_MODELS_DIR") or (
        local.modelsDir if local else None
    )
    return ResolvedProviders.model_construct(
        local=ResolvedLocalSpeech.model_construct(
            modelsDir=_home_path(home, models_dir)
            if models_dir
            else str(home / DEFAULT_LOCAL_MODELS_SUBDIR)
        )
    )


def _resolve_agents(config: PaseoConfig) -> ResolvedAgents:
    agents = config.agents
    selection = agents.skills.selection if agents and agents.skills else None
    metadata = agents.metadataGeneration if agents else None
    return ResolvedAgents.model_construct(
        skills=ResolvedSkills.model_construct(
            selection=selection or AllSkills.model_construct(mode="all")
        ),
        providers=dict((agents.providers if agents else None) or {}),
        metadataGeneration=ResolvedMetadataGeneration.model_construct(
            providers=tuple((metadata.providers if metadata else None) or ())
        ),
    )


def _stt_site(site: SttSite | None, env: _Env, path: str, provider_var: str) -> SttSite:
    current: SttSite = site or LocalStt.model_construct(provider="local")
    provider = env.choice(f"{path}.provider", ("local", "openai"), provider_var)
    if provider is not None and provider != current.provider:
        # Switching provider starts a fresh site; only the language is meaningful to both.
        language = current.language
        current = (
            OpenAiStt.model_construct(provider="openai", language=language)
            if provider == "openai"
            else LocalStt.model_construct(provider="local", language=language)
        )
    return current


def _with_language(site: SttSite, language: str | None) -> SttSite:
    return site if language is None else site.model_copy(update={"language": language})


def _resolve_features(config: PaseoConfig, env: _Env) -> ResolvedFeatures:
    features = config.features
    dictation = features.dictation if features else None
    voice = features.voiceMode if features else None
    llm = voice.llm if voice else None

    dictation_stt = _stt_site(
        dictation.stt if dictation else None,
        env,
        "features.dictation.stt",
        "PASEO_DICTATION_STT_PROVIDER",
    )
    dictation_language = env.text("features.dictation.stt.language", "PASEO_DICTATION_LANGUAGE")
    voice_stt = _stt_site(
        voice.stt if voice else None, env, "features.voiceMode.stt", "PASEO_VOICE_STT_PROVIDER"
    )
    # Voice mode falls back to the dictation language when it has none of its own.
    voice_language = env.text(
        "features.voiceMode.stt.language", "PASEO_VOICE_LANGUAGE", "PASEO_DICTATION_LANGUAGE"
    )

    turn: TurnDetectionSite = (
        voice.turnDetection if voice else None
    ) or LocalTurnDetection.model_construct(provider="local")
    turn_provider = env.choice(
        "features.voiceMode.turnDetection.provider",
        ("local", "openai"),
        "PASEO_VOICE_TURN_DETECTION_PROVIDER",
    )
    if turn_provider is not None and turn_provider != turn.provider:
        turn = (
            OpenAiTurnDetection.model_construct(provider="openai")
            if turn_provider == "openai"
            else LocalTurnDetection.model_construct(provider="local")
        )

    tts: TtsSite = (voice.tts if voice else None) or LocalTts.model_construct(provider="local")
    tts_provider = env.choice(
        "features.voiceMode.tts.provider", ("local", "openai"), "PASEO_VOICE_TTS_PROVIDER"
    )
    if tts_provider is not None and tts_provider != tts.provider:
        tts = (
            OpenAiTts.model_construct(provider="openai")
            if tts_provider == "openai"
            else LocalTts.model_construct(provider="local")
        )

    return ResolvedFeatures.model_construct(
        dictation=ResolvedDictation.model_construct(
            enabled=_first_bool(
                env.boolean("features.dictation.enabled", "PASEO_DICTATION_ENABLED"),
                dictation.enabled if dictation else None,
                True,
            ),
            stt=_with_language(dictation_stt, dictation_language),
        ),
        voiceMode=ResolvedVoiceMode.model_construct(
            enabled=_first_bool(
                env.boolean("features.voiceMode.enabled", "PASEO_VOICE_MODE_ENABLED"),
                voice.enabled if voice else None,
                True,
            ),
            llm=ResolvedVoiceLlm.model_construct(
                provider=(
                    env.text("features.voiceMode.llm.provider", "PASEO_VOICE_LLM_PROVIDER")
                    or (llm.provider if llm else None)
                    or None
                ),
                model=llm.model if llm else None,
            ),
            stt=_with_language(voice_stt, voice_language),
            turnDetection=turn,
            tts=tts,
        ),
    )


def _resolve_log(config: PaseoConfig, env: _Env, home: Path) -> ResolvedLog:
    log = config.log
    console = log.console if log else None
    file = log.file if log else None
    rotate = file.rotate if file else None

    def level(path: str, *names: str) -> LogLevel | None:
        value = env.choice(path, _LOG_LEVELS, *names)
        return _as_level(value)

    def fmt(path: str, *names: str) -> LogFormat | None:
        value = env.choice(path, _LOG_FORMATS, *names)
        return "json" if value == "json" else "pretty" if value == "pretty" else None

    env_level = level("log.level", "PASEO_LOG_LEVEL", "PASEO_LOG")
    env_format = fmt("log.format", "PASEO_LOG_FORMAT")
    file_level = log.level if log else None
    file_format = log.format if log else None
    # A specific level or format (console, file) beats the global one from the same source;
    # the environment beats the file.
    global_level = env_level or file_level or DEFAULT_LOG_LEVEL
    global_format = env_format or file_format or DEFAULT_LOG_FORMAT
    log_path = env.text("log.file.path", "PASEO_LOG_FILE_PATH") or (file.path if file else None)

    return ResolvedLog.model_construct(
        level=global_level,
        format=global_format,
        console=ResolvedConsoleLog.model_construct(
            level=level("log.console.level", "PASEO_LOG_CONSOLE_LEVEL")
            or env_level
            or (console.level if console else None)
            or file_level
            or DEFAULT_LOG_LEVEL,
            format=fmt("log.console.format", "PASEO_LOG_CONSOLE_FORMAT")
            or env_format
            or (console.format if console else None)
            or file_format
            or DEFAULT_LOG_FORMAT,
        ),
        file=ResolvedFileLog.model_construct(
            level=level("log.file.level", "PASEO_LOG_FILE_LEVEL")
            or env_level
            or (file.level if file else None)
            or file_level
            or DEFAULT_LOG_LEVEL,
            path=_home_path(home, log_path) if log_path else str(home / DEFAULT_LOG_FILENAME),
            rotate=ResolvedLogRotate.model_construct(
                maxSize=env.text("log.file.rotate.maxSize", "PASEO_LOG_FILE_ROTATE_SIZE")
                or (rotate.maxSize if rotate else None)
                or DEFAULT_LOG_ROTATE_SIZE,
                maxFiles=env.positive_int("log.file.rotate.maxFiles", "PASEO_LOG_FILE_ROTATE_COUNT")
                or (rotate.maxFiles if rotate else None)
                or DEFAULT_LOG_ROTATE_FILES,
            ),
        ),
    )


def _as_level(value: str | None) -> LogLevel | None:
    levels: dict[str, LogLevel] = {
        "trace": "trace",
        "debug": "debug",
        "info": "info",
        "warn": "warn",
        "error": "error",
        "fatal": "fatal",
    }
    return levels.get(value) if value is not None else None
