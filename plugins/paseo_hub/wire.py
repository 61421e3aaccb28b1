"""The Hub's socket messages (reference section 2), exactly as they cross the wire.

Inbound requests are parsed leniently (unknown keys ignored: the Hub may add fields) but every
required field is checked. Outbound messages always carry every key the Hub expects; keys the
reference marks nullable are sent as ``null``, never omitted.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from paseo_hookspecs.agents import BranchOff, CheckoutBranch, CheckoutPr
from paseo_hookspecs.events import AgentEvent
from pydantic import BaseModel, ConfigDict, Field

from paseo_hub.models import AgentSnapshot, usage_payload

CREATE_REQUEST = "hub.execution.agent.create.request"
CREATE_RESPONSE = "hub.execution.agent.create.response"
UPDATE = "hub.execution.agent.update"
STREAM = "hub.execution.agent.stream"
CONTROL_REQUEST = "hub.execution.control.request"
CONTROL_RESPONSE = "hub.execution.control.response"
VALIDATE_REQUEST = "hub.execution.agent.validate.request"
VALIDATE_RESPONSE = "hub.execution.agent.validate.response"
RPC_ERROR = "rpc_error"

CLOSE_REPLACED = 4001
CLOSE_REVOKED = 4403
CLOSE_GOING_AWAY = 1001


class _Inbound(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


class Grant(_Inbound):
    kind: Literal["mcp"]
    server: str = Field(min_length=1)
    tool: str = Field(min_length=1)


class ToolPolicy(_Inbound):
    preapproved: list[Grant]


class CreateRequest(_Inbound):
    type: Literal["hub.execution.agent.create.request"]
    requestId: str = Field(min_length=1)
    executionId: str = Field(min_length=1)
    provider: str = Field(min_length=1)
    cwd: str = Field(min_length=1)
    prompt: str
    toolPolicy: ToolPolicy
    model: str | None = None
    modeId: str | None = None
    thinkingOptionId: str | None = None
    providerOptions: dict[str, Any] | None = None
    env: dict[str, str] | None = None
    mcpServers: dict[str, dict[str, Any]] | None = None
    worktree: BranchOff | CheckoutBranch | CheckoutPr | None = Field(
        default=None, discriminator="type"
    )
    autoArchive: bool = False


class ControlRequest(_Inbound):
    type: Literal["hub.execution.control.request"]
    requestId: str = Field(min_length=1)
    executionId: str = Field(min_length=1)
    action: Literal["interrupt", "archive"]


class ValidateRequest(_Inbound):
    type: Literal["hub.execution.agent.validate.request"]
    requestId: str = Field(min_length=1)
    provider: str = Field(min_length=1)
    model: str | None = None
    modeId: str | None = None
    thinkingOptionId: str | None = None
    providerOptions: dict[str, Any] | None = None


REQUESTS: dict[str, type[CreateRequest | ControlRequest | ValidateRequest]] = {
    CREATE_REQUEST: CreateRequest,
    CONTROL_REQUEST: ControlRequest,
    VALIDATE_REQUEST: ValidateRequest,
}
"""The Hub session's inbound allowlist: nothing else is ever executed."""


def envelope(message: dict[str, Any]) -> str:
    return json.dumps({"type": "session", "message": message}, separators=(",", ":"))


def event_payload(event: AgentEvent) -> dict[str, Any]:
    """An agent event as local clients get it in ``agent.event`` (the stored timeline form);
    a turn's usage also under the TypeScript names."""
    payload: dict[str, Any] = event.model_dump(mode="json", exclude_none=True)
    if isinstance(payload.get("usage"), dict):
        payload["usage"] = usage_payload(payload["usage"])
    return payload


def agent_payload(snapshot: AgentSnapshot) -> dict[str, Any]:
    return snapshot.model_dump(mode="json")


def create_response(
    request_id: str,
    execution_id: str,
    snapshot: AgentSnapshot | None,
    error: dict[str, Any] | None,
) -> dict[str, Any]:
    # toolPolicyApplied is always true: the daemon applied the Hub's tool policy (it refuses a
    # create it cannot apply it to, with tool_policy_unsupported), and the Hub insists on it.
    return {
        "type": CREATE_RESPONSE,
        "payload": {
            "requestId": request_id,
            "executionId": execution_id,
            "agentId": snapshot.id if snapshot is not None else None,
            "agent": agent_payload(snapshot) if snapshot is not None else None,
            "success": error is None,
            "error": error,
            "toolPolicyApplied": True,
        },
    }


def update(execution_id: str, snapshot: AgentSnapshot) -> dict[str, Any]:
    return {
        "type": UPDATE,
        "payload": {
            "executionId": execution_id,
            "agentId": snapshot.id,
            "agent": agent_payload(snapshot),
        },
    }


def stream(execution_id: str, agent_id: str, event: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": STREAM,
        "payload": {"executionId": execution_id, "agentId": agent_id, "event": event},
    }


def control_response(
    request_id: str, execution_id: str, action: str, error: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "type": CONTROL_RESPONSE,
        "payload": {
            "requestId": request_id,
            "executionId": execution_id,
            "action": action,
            "success": error is None,
            "error": error,
        },
    }


def validate_response(
    request_id: str, issues: list[dict[str, str]], error: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "type": VALIDATE_RESPONSE,
        "payload": {
            "requestId": request_id,
            "valid": error is None and not issues,
            "issues": issues,
            "error": error,
        },
    }


def rpc_error(request_id: str, request_type: str, error: str, code: str) -> dict[str, Any]:
    return {
        "type": RPC_ERROR,
        "payload": {
            "requestId": request_id,
            "requestType": request_type,
            "error": error,
            "code": code,
        },
    }
