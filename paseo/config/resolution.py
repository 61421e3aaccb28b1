"""The effective configuration: the file's values, then defaults, then launch environment.

:func:`resolve` turns a :class:`~paseo.config.models.PaseoConfig` (what the file says) into a
:class:`~paseo.config.resolved.ResolvedConfig` where every setting has a value. Environment
variables (:mod:`paseo.config.environment`) are applied here, on the resolved view only: they
are never written back to ``config.json``, and ``ResolvedConfig.envOverrides`` records which
config paths they decided and from which variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from paseo.config.environment import EnvOverrides, parse_bool, parse_port
from paseo.config.models import (
    AllSkills,
    LocalStt,
    LocalTts,
    LocalTurnDetection,
    LogFormat,
    LogLevel,
    OpenAiStt,
    OpenAiTts,
    OpenAiTurnDetection,
    PaseoConfig,
    SttSite,
    TtsSite,
    TurnDetectionSite,
)
from paseo.config.problems import ConfigProblem
from paseo.config.resolved import (
    DEFAULT_APP_BASE_URL,
    DEFAULT_CHECKPOINTS_PER_AGENT,
    DEFAULT_GIT_MAX_PROCESS_CONCURRENCY,
    DEFAULT_GIT_MAX_PROCESSES_PER_SECOND,
    DEFAULT_LISTEN_HOST,
    DEFAULT_LOCAL_MODELS_SUBDIR,
    DEFAULT_LOG_FILENAME,
    DEFAULT_LOG_FORMAT,
    DEFAULT_LOG_LEVEL,
    DEFAULT_LOG_ROTATE_FILES,
    DEFAULT_LOG_ROTATE_SIZE,
    DEFAULT_MAX_TERMINALS,
    DEFAULT_PORT,
    DEFAULT_RELAY_ENDPOINT,
    DEFAULT_SCROLLBACK_BYTES,
    DEFAULT_SCROLLBACK_LINES,
    DEFAULT_STORAGE_DRIVER,
    DEFAULT_TRASH_RETENTION_DAYS,
    DEFAULT_TRUSTED_PROXIES,
    ResolvedAgents,
    ResolvedApp,
    ResolvedAuth,
    ResolvedConfig,
    ResolvedConsoleLog,
    ResolvedCors,
    ResolvedDaemon,
    ResolvedDictation,
    ResolvedFeatures,
    ResolvedFileLog,
    ResolvedGit,
    ResolvedLocalSpeech,
    ResolvedLog,
    ResolvedLogRotate,
    ResolvedMetadataGeneration,
    ResolvedProviders,
    ResolvedRelay,
    ResolvedSkills,
    ResolvedStorage,
    ResolvedTerminalScrollback,
    ResolvedVoiceLlm,
    ResolvedVoiceMode,
    ResolvedWorktrees,
)

_LOG_LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
_LOG_FORMATS = ("pretty", "json")


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
    return _resolve(config, EnvOverrides(os.environ if env is None else env), home)


def env_problems(
    config: PaseoConfig, env: Mapping[str, str] | None = None, *, home: Path
) -> list[ConfigProblem]:
    """Errors naming each launch variable in ``env`` that is set but cannot be used.

    The daemon ignores such a variable (falling back to the file); ``paseo config validate``
    reports it so the typo does not go unnoticed.
    """
    overrides = EnvOverrides(os.environ if env is None else env)
    _resolve(config, overrides, home)
    return [
        ConfigProblem(f"${name}", f"ignored: expected {expected}")
        for name, expected in sorted(overrides.rejected.items())
    ]


def _resolve(config: PaseoConfig, overrides: EnvOverrides, home: Path) -> ResolvedConfig:
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


def _resolve_daemon(config: PaseoConfig, env: EnvOverrides) -> ResolvedDaemon:
    daemon = config.daemon
    git = daemon.git if daemon and daemon.git else None
    relay = daemon.relay if daemon and daemon.relay else None
    auth = daemon.auth if daemon and daemon.auth else None

    listen = env.text("daemon.listen", "PASEO_LISTEN") or (daemon.listen if daemon else None)
    if not listen:
        port = parse_port(env.raw("PORT"))
        if port is not None:
            env.record("daemon.listen", "PORT")
        elif env.raw("PORT") is not None:
            env.reject("PORT", "a port number (1-65535)")
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
    scrollback = daemon.terminalScrollback if daemon else None

    return ResolvedDaemon.model_construct(
        listen=listen,
        hostnames=hostnames,
        trustedProxies=trusted,
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
        terminalScrollback=ResolvedTerminalScrollback.model_construct(
            lines=(scrollback.lines if scrollback else None) or DEFAULT_SCROLLBACK_LINES,
            bytes=(scrollback.bytes if scrollback else None) or DEFAULT_SCROLLBACK_BYTES,
        ),
        maxTerminals=(daemon.maxTerminals if daemon else None) or DEFAULT_MAX_TERMINALS,
        agentProfiles=tuple((daemon.agentProfiles if daemon else None) or ()),
        budgets=tuple((daemon.budgets if daemon else None) or ()),
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


def _trusted_proxies_env(env: EnvOverrides) -> Literal[True] | list[str] | None:
    value = env.raw("PASEO_TRUSTED_PROXIES")
    if value is None:
        return None
    env.record("daemon.trustedProxies", "PASEO_TRUSTED_PROXIES")
    parsed = parse_bool(value)
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


def _resolve_providers(config: PaseoConfig, env: EnvOverrides, home: Path) -> ResolvedProviders:
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
        defaultProvider=agents.defaultProvider if agents else None,
        metadataGeneration=ResolvedMetadataGeneration.model_construct(
            providers=tuple((metadata.providers if metadata else None) or ())
        ),
        trashRetentionDays=(agents.trashRetentionDays if agents else None)
        or DEFAULT_TRASH_RETENTION_DAYS,
        checkpointsPerAgent=DEFAULT_CHECKPOINTS_PER_AGENT
        if agents is None or agents.checkpointsPerAgent is None
        else agents.checkpointsPerAgent,
    )


def _stt_site(site: SttSite | None, env: EnvOverrides, path: str, provider_var: str) -> SttSite:
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


OPENAI_ENV: tuple[tuple[str, str], ...] = (
    ("apiKey", "OPENAI_API_KEY"),
    ("baseUrl", "OPENAI_BASE_URL"),
)
"""What an OpenAI speech site lacking its own ``apiKey`` / ``baseUrl`` uses instead (the
``openai`` engines read these from the daemon's environment)."""


def _openai_env_sources(env: EnvOverrides, sites: dict[str, SttSite | TtsSite]) -> None:
    """Record, for ``envOverrides``, each OpenAI site setting the environment supplies."""
    for path, site in sites.items():
        if site.provider != "openai":
            continue
        for field, variable in OPENAI_ENV:
            if getattr(site, field, None) is None and env.raw(variable) is not None:
                env.record(f"{path}.{field}", variable)


def _resolve_features(config: PaseoConfig, env: EnvOverrides) -> ResolvedFeatures:
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

    dictation_stt = _with_language(dictation_stt, dictation_language)
    voice_stt = _with_language(voice_stt, voice_language)
    _openai_env_sources(
        env,
        {
            "features.dictation.stt": dictation_stt,
            "features.voiceMode.stt": voice_stt,
            "features.voiceMode.tts": tts,
        },
    )
    return ResolvedFeatures.model_construct(
        dictation=ResolvedDictation.model_construct(
            enabled=_first_bool(
                env.boolean("features.dictation.enabled", "PASEO_DICTATION_ENABLED"),
                dictation.enabled if dictation else None,
                True,
            ),
            stt=dictation_stt,
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
            stt=voice_stt,
            turnDetection=turn,
            tts=tts,
        ),
    )


def _resolve_log(config: PaseoConfig, env: EnvOverrides, home: Path) -> ResolvedLog:
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
