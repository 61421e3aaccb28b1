"""``metadata.*`` over the wire: generated commit messages and change-request text for a
checkout (titles and branch names are generated where agents and worktrees are created)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs.context import RpcContext
from paseo_hookspecs.registration import RpcMethod, RpcMethodGroup
from pydantic import BaseModel, Field

from paseo.rpc.models import WireModel

if TYPE_CHECKING:
    from paseo.metadata.service import MetadataService
    from paseo.services import ServiceRef

OWNER = frozenset({"local", "remote"})


class CommitMessageParams(WireModel):
    cwd: str = Field(min_length=1, description="a directory of the checkout")


class CommitMessageResult(WireModel):
    generated: bool = Field(description="false: generation failed; nothing is suggested")
    subject: str | None = None
    body: str | None = None


class ChangeRequestParams(WireModel):
    cwd: str = Field(min_length=1, description="a directory of the checkout")
    base: str | None = Field(
        default=None, max_length=300, description="compare with (default: the default branch)"
    )


class ChangeRequestResult(WireModel):
    generated: bool = Field(description="false: generation failed; nothing is suggested")
    title: str | None = None
    body: str | None = None


def method_groups(ref: ServiceRef[MetadataService]) -> list[RpcMethodGroup]:
    """The ``metadata`` method group, calling the service ``ref`` is bound to."""

    async def commit_message(ctx: RpcContext, params: CommitMessageParams) -> CommitMessageResult:
        service = ref.get()
        cwd = await service.checked_path(params.cwd, ctx.session_kind)
        found = await service.commit_message_for(cwd)
        if found is None:
            return CommitMessageResult(generated=False)
        return CommitMessageResult(generated=True, subject=found[0], body=found[1])

    async def change_request(ctx: RpcContext, params: ChangeRequestParams) -> ChangeRequestResult:
        service = ref.get()
        cwd = await service.checked_path(params.cwd, ctx.session_kind)
        found = await service.change_request_for(cwd, params.base)
        if found is None:
            return ChangeRequestResult(generated=False)
        return ChangeRequestResult(generated=True, title=found[0], body=found[1])

    return [
        RpcMethodGroup(
            "metadata",
            [
                RpcMethod(
                    "metadata.commit-message",
                    commit_message,
                    CommitMessageParams,
                    CommitMessageResult,
                    "A generated commit message for the staged (else uncommitted) change",
                    access=OWNER,
                ),
                RpcMethod(
                    "metadata.change-request",
                    change_request,
                    ChangeRequestParams,
                    ChangeRequestResult,
                    "Generated pull request title and description for HEAD beyond a base",
                    access=OWNER,
                ),
            ],
        )
    ]


def notifications() -> dict[str, type[BaseModel]]:
    """The metadata service sends none."""
    return {}
