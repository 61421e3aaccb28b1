"""The persisted shape of ``$PASEO_HOME/config.json``.

Attribute names are the camelCase JSON keys, so a model and its file read the same and a JSON
path such as ``daemon.git.maxProcessConcurrency`` is also the attribute chain. Every field is
optional: a model holds only what the file says (dump with ``exclude_unset=True``) and
defaults live in :mod:`paseo.config.resolved`, so saving a model never writes defaults into
the file.

Models are strict: unknown keys are refused and values are not coerced (``"8"`` is not an
integer), matching what other Paseo implementations accept. Tolerating unknown keys written by
a newer daemon is the loader's job, not the schema's.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from paseo_hookspecs.notifications import MAX_SINKS, NotificationSink
from paseo_hookspecs.terminals import TerminalProfile
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

from paseo.redaction.settings import RedactionConfig

PROVIDER_ID_PATTERN = r"^[a-z][a-z0-9-]*$"
PLUGIN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"

LogLevel = Literal["trace", "debug", "info", "warn", "error", "fatal"]
LogFormat = Literal["pretty", "json"]
SpeechProvider = Literal["local", "openai"]

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
ProviderId = Annotated[str, StringConstraints(pattern=PROVIDER_ID_PATTERN)]
PluginId = Annotated[str, StringConstraints(pattern=PLUGIN_ID_PATTERN)]
PositiveInt = Annotated[int, Field(gt=0)]

_BCRYPT_HASH = re.compile(r"^\$2[aby]\$\d{2}\$[./A-Za-z0-9]{53}$")
_PORT_RANGE = re.compile(r"^(\d{1,5})-(\d{1,5})$")


class PathedValueError(ValueError):
    """A validation failure below the field being validated.

    Cross-field rules (a custom provider must declare ``label``) run on the whole mapping,
    so pydantic would report them at the mapping's path. The loader appends ``subpath`` to
    that location so the message names the exact key, e.g. ``agents.providers.zai.label``.
    """

    def __init__(self, message: str, subpath: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.subpath = subpath


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True, defer_build=True)


# --- daemon ------------------------------------------------------------------------------


def _true_or_strings(value: Any) -> Any:
    # `true | string[]` gets one readable message instead of one error per union member.
    if value is True:
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    raise ValueError("expected true or a list of strings")


class GitConfig(_Model):
    maxProcessesPerSecond: PositiveInt | None = None
    maxProcessConcurrency: PositiveInt | None = None


class TerminalScrollbackConfig(_Model):
    """How much a terminal keeps above its screen (the oldest lines go first)."""

    lines: Annotated[int, Field(gt=0, le=100_000)] | None = None
    bytes: Annotated[int, Field(ge=4096, le=256 * 1024 * 1024)] | None = None
    """Memory the kept lines' text may take."""


class ProfileBudget(_Model):
    """The budget of each agent a profile launches: the agent's ``budget`` (tokens and/or
    USD over the agent's life, see docs/usage.md)."""

    tokens: Annotated[int, Field(gt=0)] | None = None
    usd: Annotated[float, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _complete(self) -> ProfileBudget:
        if self.tokens is None and self.usd is None:
            raise ValueError("a budget needs tokens or usd")
        return self


class AgentProfile(_Model):
    """A named launch bundle: a provider plus the agent settings a client would set one by one.

    Its fields are defaults of the agents launched with it (``paseo run --profile``,
    ``agent.create`` ``profile``, a schedule's new-agent target): what the caller names wins."""

    id: NonEmpty
    name: NonEmpty
    provider: NonEmpty
    icon: str | None = None
    color: str | None = None
    model: str | None = None
    modeId: str | None = None
    thinkingOptionId: str | None = None
    featureValues: dict[str, Any] | None = None
    systemPrompt: str | None = None
    """Added to the agent's own system prompt (``daemon.appendSystemPrompt`` still follows)."""
    mcpServers: dict[str, Any] | None = None
    labels: dict[str, str] | None = None
    notes: str | None = None
    cycle: bool | None = None
    budget: ProfileBudget | None = None
    """Each launched agent's budget, unless the caller gives one (``--budget-tokens``)."""


def _check_agent_profiles(profiles: list[AgentProfile] | None) -> list[AgentProfile] | None:
    # A profile is launched by id or by name, so neither may name two profiles.
    seen: dict[str, int] = {}
    for index, profile in enumerate(profiles or ()):
        for key in ("id", "name"):
            value = getattr(profile, key)
            marker = f"{key}:{value}"
            if marker in seen:
                raise PathedValueError(
                    f"agent profile {key} {value!r} is already used by "
                    f"daemon.agentProfiles[{seen[marker]}]",
                    (index, key),
                )
            seen[marker] = index
    return profiles


class CorsConfig(_Model):
    allowedOrigins: list[str] | None = None


class RelayConfig(_Model):
    enabled: bool | None = None
    endpoint: str | None = None
    publicEndpoint: str | None = None
    useTls: bool | None = None
    publicUseTls: bool | None = None


class AuthConfig(_Model):
    password: str | None = None
    """A bcrypt hash; the plain password is never stored."""

    @field_validator("password")
    @classmethod
    def _bcrypt(cls, value: str | None) -> str | None:
        if value is not None and not _BCRYPT_HASH.match(value):
            raise ValueError("expected a bcrypt hash")
        return value


class BudgetConfig(_Model):
    """A spending cap over a calendar period (UTC): for the whole daemon, one project or one
    provider. Prompts that would spend more are refused and schedules pause themselves."""

    scope: Literal["daemon", "project", "provider"] = "daemon"
    id: NonEmpty | None = None
    """The project id or provider id (for ``project`` and ``provider`` scopes)."""
    period: Literal["daily", "weekly", "monthly"] = "daily"
    tokens: Annotated[int, Field(gt=0)] | None = None
    usd: Annotated[float, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _complete(self) -> BudgetConfig:
        if self.tokens is None and self.usd is None:
            raise ValueError("a budget needs tokens or usd")
        if (self.scope == "daemon") != (self.id is None):
            raise ValueError("a project or provider budget needs an id; a daemon budget none")
        return self


class DaemonConfig(_Model):
    listen: str | None = None
    hostnames: Literal[True] | list[str] | None = None
    trustedProxies: Literal[True] | list[str] | None = None
    git: GitConfig | None = None
    appendSystemPrompt: str | None = None
    terminalProfiles: list[TerminalProfile] | None = None
    """The contract's model: providers offer theirs in the same shape when this is absent."""
    terminalScrollback: TerminalScrollbackConfig | None = None
    maxTerminals: Annotated[int, Field(gt=0, le=4096)] | None = None
    """Terminals running at once; creating one more is refused."""
    agentProfiles: list[AgentProfile] | None = None
    budgets: list[BudgetConfig] | None = None
    """Daily, weekly or monthly spending caps (see docs/usage.md)."""
    cors: CorsConfig | None = None
    relay: RelayConfig | None = None
    auth: AuthConfig | None = None
    redaction: RedactionConfig | None = None
    """Secrets replaced in timeline entries and logs (docs/redaction.md)."""
    notifications: Annotated[list[NotificationSink], Field(max_length=MAX_SINKS)] | None = None
    """Where attention is sent besides push: webhook, ntfy, command (docs/notifications.md).
    The contract's models, so a notifier plugin reads what start-up validated."""

    @field_validator("hostnames", "trustedProxies", mode="before")
    @classmethod
    def _true_or_strings(cls, value: Any) -> Any:
        return _true_or_strings(value)

    @field_validator("listen")
    @classmethod
    def _listen(cls, value: str | None) -> str | None:
        # The transport parses it at start-up: a value it cannot use is refused when written
        # and reported by `config validate`, not found out by `daemon start`.
        from paseo_hookspecs.address import AddressError, parse_address

        if value is not None:
            try:
                parse_address(value)
            except AddressError as error:
                raise ValueError(str(error)) from None
        return value

    @field_validator("agentProfiles")
    @classmethod
    def _agent_profiles(cls, value: list[AgentProfile] | None) -> list[AgentProfile] | None:
        return _check_agent_profiles(value)


# --- app, worktrees, providers -------------------------------------------------------------


class AppConfig(_Model):
    baseUrl: str | None = None


class ServicePortsConfig(_Model):
    range: str | None = None
    """Inclusive TCP port range such as ``"3000-4000"``."""
    portScript: NonEmpty | None = None

    @field_validator("range")
    @classmethod
    def _port_range(cls, value: str | None) -> str | None:
        if value is None:
            return value
        match = _PORT_RANGE.match(value)
        if match is None:
            raise ValueError('expected an inclusive port range such as "3000-4000"')
        start, end = int(match[1]), int(match[2])
        if not (1 <= start <= end <= 65535):
            raise ValueError("expected an inclusive TCP port range within 1-65535")
        return value


class WorktreesConfig(_Model):
    root: NonEmpty | None = None
    servicePorts: ServicePortsConfig | None = None


class LocalSpeechStorage(_Model):
    modelsDir: NonEmpty | None = None


class ProvidersConfig(_Model):
    local: LocalSpeechStorage | None = None


# --- agents ---------------------------------------------------------------------------------


class AllSkills(_Model):
    mode: Literal["all"]


class CustomSkills(_Model):
    mode: Literal["custom"]
    skills: list[str]


SkillSelection = Annotated[AllSkills | CustomSkills, Field(discriminator="mode")]


class SkillsConfig(_Model):
    selection: SkillSelection | None = None


class ThinkingOption(_Model):
    id: str
    label: str
    description: str | None = None
    isDefault: bool | None = None


class ProviderModel(_Model):
    id: NonEmpty
    label: NonEmpty
    description: str | None = None
    isDefault: bool | None = None
    thinkingOptions: list[ThinkingOption] | None = None


class ProviderOverride(_Model):
    """Settings for an installed provider, or the definition of a custom one (``extends``)."""

    extends: str | None = None
    label: str | None = None
    description: str | None = None
    command: Annotated[list[NonEmpty], Field(min_length=1)] | None = None
    """argv that replaces the provider's default binary."""
    env: dict[str, str] | None = None
    models: list[ProviderModel] | None = None
    """Replaces model discovery."""
    additionalModels: list[ProviderModel] | None = None
    """Merged into discovered models by id."""
    disallowedTools: list[str] | None = None
    enabled: bool | None = None
    order: int | float | None = None


def _check_provider_overrides(
    providers: dict[str, ProviderOverride] | None,
) -> dict[str, ProviderOverride] | None:
    # Which ids exist (what an entry may extend, which entries need extends) depends on the
    # installed plugins: paseo.config.providers checks that once they are known.
    for provider_id, entry in (providers or {}).items():
        if entry.extends is not None and not entry.label:
            raise PathedValueError(
                f'custom provider "{provider_id}" must declare label', (provider_id, "label")
            )
    return providers


class MetadataGenerationProvider(_Model):
    provider: NonEmpty
    model: NonEmpty | None = None
    thinkingOptionId: NonEmpty | None = None


class MetadataGenerationConfig(_Model):
    providers: list[MetadataGenerationProvider] | None = None
    """Empty means Automatic; a non-empty list is tried in order and nothing else."""


class AgentsConfig(_Model):
    skills: SkillsConfig | None = None
    providers: dict[ProviderId, ProviderOverride] | None = None
    defaultProvider: ProviderId | None = None
    """The provider an agent gets when none is named. Absent: the first ready provider by
    ``order``, plugin providers before custom (``extends``) ones, then by id."""
    metadataGeneration: MetadataGenerationConfig | None = None
    trashRetentionDays: Literal[15, 30] | None = None
    """Days a deleted agent stays restorable in the trash before it is purged (default 30)."""
    checkpointsPerAgent: Annotated[int, Field(ge=0, le=10_000)] | None = None
    """Turn checkpoints kept per agent, the oldest pruned first (default 100; 0: none taken)."""

    @field_validator("providers")
    @classmethod
    def _providers(
        cls, value: dict[str, ProviderOverride] | None
    ) -> dict[str, ProviderOverride] | None:
        return _check_provider_overrides(value)


# --- plugins ----------------------------------------------------------------------------------


class PluginEntry(_Model):
    source: Literal["directory"] | None = None
    path: NonEmpty | None = None
    enabled: bool | None = None
    settings: dict[str, Any] | None = None


# --- features: speech sites ---------------------------------------------------------------------


class LocalStt(_Model):
    provider: Literal["local"]
    model: NonEmpty | None = None
    language: NonEmpty | None = None


class OpenAiStt(_Model):
    provider: Literal["openai"]
    model: NonEmpty | None = None
    language: NonEmpty | None = None
    apiKey: NonEmpty | None = None
    baseUrl: NonEmpty | None = None
    confidenceThreshold: float | None = None


class LocalTurnDetection(_Model):
    provider: Literal["local"]


class OpenAiTurnDetection(_Model):
    provider: Literal["openai"]


class LocalTts(_Model):
    provider: Literal["local"]
    model: NonEmpty | None = None
    voice: NonEmpty | None = None
    speakerId: int | None = None
    speed: float | None = None


class OpenAiTts(_Model):
    provider: Literal["openai"]
    model: NonEmpty | None = None
    voice: NonEmpty | None = None
    """Free-form: a self-hosted OpenAI-compatible server names its own voices."""
    speed: float | None = None
    apiKey: NonEmpty | None = None
    baseUrl: NonEmpty | None = None


SttSite = Annotated[LocalStt | OpenAiStt, Field(discriminator="provider")]
TurnDetectionSite = Annotated[
    LocalTurnDetection | OpenAiTurnDetection, Field(discriminator="provider")
]
TtsSite = Annotated[LocalTts | OpenAiTts, Field(discriminator="provider")]


class DictationConfig(_Model):
    enabled: bool | None = None
    stt: SttSite | None = None


class VoiceLlmConfig(_Model):
    provider: str | None = None
    model: NonEmpty | None = None


class VoiceModeConfig(_Model):
    enabled: bool | None = None
    llm: VoiceLlmConfig | None = None
    stt: SttSite | None = None
    turnDetection: TurnDetectionSite | None = None
    tts: TtsSite | None = None


class FeaturesConfig(_Model):
    dictation: DictationConfig | None = None
    voiceMode: VoiceModeConfig | None = None


# --- log, storage ---------------------------------------------------------------------------------


class ConsoleLogConfig(_Model):
    level: LogLevel | None = None
    format: LogFormat | None = None


class LogRotateConfig(_Model):
    maxSize: NonEmpty | None = None
    """Size before rotation, e.g. ``"10m"``."""
    maxFiles: PositiveInt | None = None


class FileLogConfig(_Model):
    level: LogLevel | None = None
    path: NonEmpty | None = None
    rotate: LogRotateConfig | None = None


class LogConfig(_Model):
    level: LogLevel | None = None
    format: LogFormat | None = None
    console: ConsoleLogConfig | None = None
    file: FileLogConfig | None = None


class StorageConfig(_Model):
    driver: NonEmpty | None = None
    """Name of the store driver (a plugin entry point); ``json`` when absent."""


class PaseoConfig(_Model):
    """The whole of ``config.json``."""

    jsonSchema: str | None = Field(default=None, alias="$schema")
    version: Literal[1] | None = None
    daemon: DaemonConfig | None = None
    app: AppConfig | None = None
    worktrees: WorktreesConfig | None = None
    providers: ProvidersConfig | None = None
    agents: AgentsConfig | None = None
    pluginsEnabled: bool | None = None
    plugins: dict[PluginId, PluginEntry] | None = None
    features: FeaturesConfig | None = None
    log: LogConfig | None = None
    storage: StorageConfig | None = None

    def to_json(self) -> dict[str, Any]:
        """The file form: only the keys that were set, by their JSON names."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
