"""Durable record models: the JSON shapes Paseo keeps under ``$PASEO_HOME``.

These are the exact on-disk shapes TypeScript Paseo writes (field names in camelCase, as stored),
shared by store drivers and services. Reading is forward compatible: unknown fields are kept and
written back. Load with ``Model.model_validate(data)``, write with :func:`dump_record`; for every
record TypeScript Paseo writes, ``dump_record(Model.model_validate(x)) == x``.

=====================================================  ==========================================
File                                                   Model
=====================================================  ==========================================
``agents/{sanitized-cwd}/{agentId}.json``              :class:`AgentRecord`
``schedules/{scheduleId}.json``                        :class:`ScheduleRecord`
``projects/projects.json``                             :class:`ProjectsFile`
``projects/workspaces.json``                           :class:`WorkspacesFile`
``projects/workspace-labels.json``                     :class:`WorkspaceLabelsFile`
``projects/workspace-labels.transaction.json``         :class:`WorkspaceLabelTransaction`
``runtime/managed-processes/{recordId}.json``          :class:`ManagedProcessRecord`
``plugins/sources.json``                               :class:`PluginSourcesFile`
``push-tokens.json``                                   :class:`PushTokensFile`
agent timelines (Python Paseo only)                    :class:`TimelineEntry`
``trash/cleanup/{itemId}.json`` (Python Paseo only)    :class:`CleanupItem`
=====================================================  ==========================================
"""

from __future__ import annotations

from paseo_hookspecs.records._base import RecordModel, dump_record
from paseo_hookspecs.records.agent import (
    AgentBudget,
    AgentFeature,
    AgentFeatureSelect,
    AgentFeatureToggle,
    AgentRecord,
    AgentSelectOption,
    AgentStatus,
    AttentionReason,
    PersistenceHandle,
    RuntimeInfo,
    SerializableConfig,
)
from paseo_hookspecs.records.ids import (
    AGENT_ID_PATTERN,
    PROJECT_ID_PATTERN,
    SCHEDULE_ID_PATTERN,
    WORKSPACE_ID_PATTERN,
    ProjectIdShape,
    is_opaque_project_id,
    new_agent_id,
    new_project_id,
    new_schedule_id,
    new_workspace_id,
    project_id_shape,
)
from paseo_hookspecs.records.labels import (
    RESERVED_WORKSPACE_LABEL_PREFIX,
    WORKSPACE_LABEL_COLORS,
    WorkspaceLabelColor,
    WorkspaceLabelDefinition,
    WorkspaceLabelsFile,
    WorkspaceLabelTransaction,
    WorkspaceLabelTransactionPhase,
    WorkspaceLabelWorkspaceState,
    duplicate_label_identities,
    is_reserved_label_name,
    label_identity,
    normalize_label_name,
)
from paseo_hookspecs.records.layout import (
    AGENTS_DIR,
    MANAGED_PROCESSES_DIR,
    PLUGIN_SOURCES_FILE,
    PROJECTS_FILE,
    PUSH_TOKENS_FILE,
    SCHEDULES_DIR,
    WORKSPACE_LABELS_FILE,
    WORKSPACE_LABELS_TRANSACTION_FILE,
    WORKSPACES_FILE,
    agent_record_path,
    managed_process_record_path,
    sanitize_cwd,
    schedule_record_path,
)
from paseo_hookspecs.records.plugin_source import (
    GitPluginSource,
    NpmPluginSource,
    PluginSource,
    PluginSourceRecord,
    PluginSourcesFile,
)
from paseo_hookspecs.records.process import (
    ManagedProcessDaemon,
    ManagedProcessOwner,
    ManagedProcessRecord,
    ProcessIdentity,
)
from paseo_hookspecs.records.project import ProjectKind, ProjectRecord, ProjectsFile
from paseo_hookspecs.records.push import PushTokensFile
from paseo_hookspecs.records.schedule import (
    AgentScheduleTarget,
    CronCadence,
    EveryCadence,
    NewAgentConfig,
    NewAgentScheduleTarget,
    PluginScheduleTarget,
    ScheduleCadence,
    ScheduleRecord,
    ScheduleRun,
    ScheduleRunStatus,
    ScheduleStatus,
    ScheduleTarget,
)
from paseo_hookspecs.records.timeline import TimelineEntry
from paseo_hookspecs.records.trash import CleanupItem
from paseo_hookspecs.records.workspace import (
    UntrustedSource,
    WorkspaceKind,
    WorkspaceRecord,
    WorkspacesFile,
)

__all__ = [
    "AGENTS_DIR",
    "AGENT_ID_PATTERN",
    "MANAGED_PROCESSES_DIR",
    "PLUGIN_SOURCES_FILE",
    "PROJECTS_FILE",
    "PROJECT_ID_PATTERN",
    "PUSH_TOKENS_FILE",
    "RESERVED_WORKSPACE_LABEL_PREFIX",
    "SCHEDULES_DIR",
    "SCHEDULE_ID_PATTERN",
    "WORKSPACES_FILE",
    "WORKSPACE_ID_PATTERN",
    "WORKSPACE_LABELS_FILE",
    "WORKSPACE_LABELS_TRANSACTION_FILE",
    "WORKSPACE_LABEL_COLORS",
    "AgentBudget",
    "AgentFeature",
    "AgentFeatureSelect",
    "AgentFeatureToggle",
    "AgentRecord",
    "AgentScheduleTarget",
    "AgentSelectOption",
    "AgentStatus",
    "AttentionReason",
    "CleanupItem",
    "CronCadence",
    "EveryCadence",
    "GitPluginSource",
    "ManagedProcessDaemon",
    "ManagedProcessOwner",
    "ManagedProcessRecord",
    "NewAgentConfig",
    "NewAgentScheduleTarget",
    "NpmPluginSource",
    "PersistenceHandle",
    "PluginScheduleTarget",
    "PluginSource",
    "PluginSourceRecord",
    "PluginSourcesFile",
    "ProcessIdentity",
    "ProjectIdShape",
    "ProjectKind",
    "ProjectRecord",
    "ProjectsFile",
    "PushTokensFile",
    "RecordModel",
    "RuntimeInfo",
    "ScheduleCadence",
    "ScheduleRecord",
    "ScheduleRun",
    "ScheduleRunStatus",
    "ScheduleStatus",
    "ScheduleTarget",
    "SerializableConfig",
    "TimelineEntry",
    "UntrustedSource",
    "WorkspaceKind",
    "WorkspaceLabelColor",
    "WorkspaceLabelDefinition",
    "WorkspaceLabelTransaction",
    "WorkspaceLabelTransactionPhase",
    "WorkspaceLabelWorkspaceState",
    "WorkspaceLabelsFile",
    "WorkspaceRecord",
    "WorkspacesFile",
    "agent_record_path",
    "dump_record",
    "duplicate_label_identities",
    "is_opaque_project_id",
    "is_reserved_label_name",
    "label_identity",
    "managed_process_record_path",
    "new_agent_id",
    "new_project_id",
    "new_schedule_id",
    "new_workspace_id",
    "normalize_label_name",
    "project_id_shape",
    "sanitize_cwd",
    "schedule_record_path",
]
