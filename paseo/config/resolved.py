"""The effective configuration's shape: every setting with a value, and the defaults.

:func:`paseo.config.resolution.resolve` builds a :class:`ResolvedConfig` from what the file
says (:class:`~paseo.config.models.PaseoConfig`), these defaults and the launch environment
(:mod:`paseo.config.environment`).

Absent and empty differ for ``daemon.terminalProfiles``: absent (``None``) means the profiles
the installed agent providers offer (the kernel names no agent program), ``[]`` means the user
removed them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from paseo_hookspecs.terminals import TerminalProfile
from pydantic import BaseModel, ConfigDict, Field

from paseo.config.models import (
    AgentProfile,
    BudgetConfig,
    LogFormat,
    LogLevel,
    MetadataGenerationProvider,
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
DEFAULT_SCROLLBACK_LINES = 2000
"""Lines a terminal keeps above its screen (the TypeScript daemon keeps 1,000)."""
DEFAULT_MAX_TERMINALS = 64
"""Terminals running at once: each is a program, a pty and an emulator with its scrollback."""
DEFAULT_SCROLLBACK_BYTES = 1024 * 1024
"""Memory those lines' text may take: about what the TypeScript daemon's 1,000 lines of
80-column xterm cells take."""
DEFAULT_LOG_LEVEL: LogLevel = "info"
DEFAULT_LOG_FORMAT: LogFormat = "pretty"
DEFAULT_LOG_FILENAME = "daemon.log"
DEFAULT_LOG_ROTATE_SIZE = "10m"
DEFAULT_LOG_ROTATE_FILES = 2
DEFAULT_STORAGE_DRIVER = "json"
DEFAULT_TRASH_RETENTION_DAYS = 30
DEFAULT_CHECKPOINTS_PER_AGENT = 100
DEFAULT_LOCAL_MODELS_SUBDIR = Path("models") / "local-speech"


class _Frozen(BaseModel):
    # Built by resolve() from values it has already checked and typed: instances are made
    # with model_construct, so the validators are built only if something validates one.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class ResolvedGit(_Frozen):
    maxProcessesPerSecond: int
    maxProcessConcurrency: int


class ResolvedTerminalScrollback(_Frozen):
    lines: int
    bytes: int


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
    git: ResolvedGit
    appendSystemPrompt: str
    terminalProfiles: tuple[TerminalProfile, ...] | None
    """``None`` when config.json has none: the installed providers offer theirs."""
    terminalScrollback: ResolvedTerminalScrollback
    """Read when a terminal starts."""
    maxTerminals: int
    """Terminals running at once (exited ones do not count); read when one starts."""
    agentProfiles: tuple[AgentProfile, ...]
    budgets: tuple[BudgetConfig, ...] = ()
    """Spending caps per period (read at each prompt)."""
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
    defaultProvider: str | None = None
    metadataGeneration: ResolvedMetadataGeneration
    trashRetentionDays: int = DEFAULT_TRASH_RETENTION_DAYS
    checkpointsPerAgent: int = DEFAULT_CHECKPOINTS_PER_AGENT


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
