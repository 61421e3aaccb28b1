"""``skills.list`` and ``skills.sync`` over the wire."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import StorageError
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import Field

from paseo.rpc.models import WireModel
from paseo.services import ServiceRef

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext
    from pydantic import BaseModel

    from paseo.skills.service import SkillsReport, SkillsService


class SkillInfo(WireModel):
    name: str
    description: str
    selected: bool = Field(description="whether agents.skills.selection includes it")
    targets: dict[str, str] = Field(
        description="agents, claude, codex → installed, outdated, modified or missing"
    )


class SkillAction(WireModel):
    skill: str
    target: str
    path: str
    action: str = Field(description="installed, updated, removed, or kept (a user's file)")


class SkillsListResult(WireModel):
    skills: list[SkillInfo]
    unknown: list[str] = Field(description="selected names Paseo does not ship")


class SkillsSyncResult(SkillsListResult):
    actions: list[SkillAction]


def _skills(report: SkillsReport) -> dict[str, Any]:
    return {
        "skills": [
            SkillInfo(
                name=s.name, description=s.description, selected=s.selected, targets=s.states
            )
            for s in report.skills
        ],
        "unknown": report.unknown,
    }


def method_groups(ref: ServiceRef[SkillsService]) -> list[RpcMethodGroup]:
    """The ``skills`` group, reaching its service through ``ref``."""

    async def list_skills(ctx: RpcContext, params: None) -> SkillsListResult:
        return SkillsListResult(**_skills(await ref.get().list_skills()))

    async def sync(ctx: RpcContext, params: None) -> SkillsSyncResult:
        try:
            report = await ref.get().sync()
        except OSError as exc:
            raise StorageError(f"could not write the skills: {exc}") from exc
        actions = [
            SkillAction(skill=a.skill, target=a.target, path=a.path, action=a.action)
            for a in report.actions
        ]
        return SkillsSyncResult(**_skills(report), actions=actions)

    return [
        RpcMethodGroup(
            "skills",
            [
                RpcMethod(
                    "skills.list",
                    list_skills,
                    None,
                    SkillsListResult,
                    "Paseo's orchestration skills and what each skill directory holds",
                ),
                RpcMethod(
                    "skills.sync",
                    sync,
                    None,
                    SkillsSyncResult,
                    "Install the selected skills, retire the rest and the ~/.codex/skills "
                    "copies, keeping user edits",
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The skills service sends no notifications."""
    return {}
