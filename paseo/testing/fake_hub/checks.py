"""What the real Hub accepts from a daemon (reference section 2), as checks.

The real Hub silently drops a message that fails its schema, which shows up only as a timeout.
The fake Hub drops it too, but also records why in :attr:`FakeHub.violations`, so a test can
assert the daemon's wire is exactly the reference's.
"""

from __future__ import annotations

from typing import Any

STATUSES = frozenset({"error", "initializing", "idle", "running", "closed"})
EVENT_FIELDS: dict[str, tuple[str, ...]] = {
    "thread_started": ("sessionId", "provider"),
    "turn_started": ("provider",),
    "turn_completed": ("provider",),
    "turn_failed": ("provider", "error"),
    "turn_canceled": ("provider", "reason"),
    "timeline": ("provider", "item"),
    "permission_requested": ("provider", "request"),
    "permission_resolved": ("provider", "requestId", "resolution"),
    "attention_required": ("provider", "reason", "timestamp", "shouldNotify"),
}
CREATE_ERROR_CODES = frozenset(
    {"provider_options_invalid", "tool_policy_unsupported", "create_failed"}
)


def _keys(payload: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    missing = [key for key in keys if key not in payload]
    return f"missing keys {missing}" if missing else None


def _agent(agent: Any) -> str | None:
    if not isinstance(agent, dict) or not isinstance(agent.get("id"), str):
        return "agent must be an object with an id"
    if agent.get("status") not in STATUSES:
        return f"agent status {agent.get('status')!r} is not one of {sorted(STATUSES)}"
    return None


def _create_response(p: dict[str, Any]) -> str | None:
    keys = ("requestId", "executionId", "agentId", "agent", "success", "error")
    problem = _keys(p, keys)
    if problem:
        return problem
    if p["success"] is True:
        if p.get("toolPolicyApplied") is not True:
            return "tool_policy_not_confirmed: success without toolPolicyApplied:true"
        if not isinstance(p["agentId"], str):
            return "success without an agentId"
        return _agent(p["agent"])
    error = p["error"]
    if not isinstance(error, dict) or error.get("code") not in CREATE_ERROR_CODES:
        return f"a failed create needs a structured error, got {error!r}"
    if not isinstance(error.get("message"), str):
        return "the error has no message"
    if error["code"] == "provider_options_invalid" and not isinstance(error.get("issues"), list):
        return "provider_options_invalid without issues"
    if error["code"] != "create_failed" and not isinstance(error.get("provider"), str):
        return f"{error['code']} without a provider"
    return None


def _stream(p: dict[str, Any]) -> str | None:
    problem = _keys(p, ("executionId", "agentId", "event"))
    if problem:
        return problem
    event = p["event"]
    if not isinstance(event, dict) or event.get("type") not in EVENT_FIELDS:
        return f"unknown event {event!r:.80}"
    problem = _keys(event, EVENT_FIELDS[event["type"]])
    if problem:
        return f"{event['type']}: {problem}"
    if event["type"] == "timeline" and not isinstance(event["item"].get("type"), str):
        return "timeline item without a type"
    return None


def _update(p: dict[str, Any]) -> str | None:
    return _keys(p, ("executionId", "agentId", "agent")) or _agent(p["agent"])


def _control(p: dict[str, Any]) -> str | None:
    problem = _keys(p, ("requestId", "executionId", "action", "success", "error"))
    if problem:
        return problem
    return None if p["action"] in ("interrupt", "archive") else "unknown action"


def _validate(p: dict[str, Any]) -> str | None:
    problem = _keys(p, ("requestId", "valid", "issues", "error"))
    if problem:
        return problem
    return None if isinstance(p["issues"], list) else "issues must be a list"


def _rpc_error(p: dict[str, Any]) -> str | None:
    return _keys(p, ("requestId", "error"))


CHECKS = {
    "hub.execution.agent.create.response": _create_response,
    "hub.execution.agent.stream": _stream,
    "hub.execution.agent.update": _update,
    "hub.execution.control.response": _control,
    "hub.execution.agent.validate.response": _validate,
    "rpc_error": _rpc_error,
}


def check(message: Any) -> str | None:
    """Why the Hub would drop ``message`` (``None``: it accepts it)."""
    if not isinstance(message, dict):
        return "the session message is not an object"
    checker = CHECKS.get(message.get("type"))  # type: ignore[arg-type]
    if checker is None:
        return f"unknown message type {message.get('type')!r}"
    payload = message.get("payload")
    if not isinstance(payload, dict):
        return "the message has no payload object"
    return checker(payload)
