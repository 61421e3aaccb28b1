"""The ``paseo_worktree_setup`` tool call: a new worktree's setup, shown in the timeline of the
agent started in it (the TypeScript daemon's ``worktree_setup`` entry).

The setup ran before the agent existed (``worktree.create`` runs it before the workspace is
registered), so the call is recorded once, completed or failed, as the agent's first entry.
Its detail is an ``other`` detail whose ``input`` says ``kind: "worktree_setup"`` with the
checkout and branch, and whose ``output`` holds the commands and their output, as the
worktrees room kept them (:mod:`paseo.worktrees.setup_status`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paseo_hookspecs.events import OtherDetail, Timeline, ToolCallItem

SetupSource = Callable[[str], dict[str, Any] | None]
"""A workspace's setup run not yet shown to an agent (each is handed out once)."""

TOOL_NAME = "paseo_worktree_setup"


def setup_event(provider: str, run: dict[str, Any]) -> Timeline:
    """The timeline event of one setup run (``SetupRun.to_json()``)."""
    status = "failed" if run.get("status") == "failed" else "completed"
    return Timeline(
        provider=provider,
        item=ToolCallItem(
            callId=f"worktree-setup-{run['workspaceId']}",
            name=TOOL_NAME,
            status=status,
            detail=OtherDetail(
                input={
                    "kind": "worktree_setup",
                    "worktreePath": run.get("path"),
                    "branchName": run.get("branch"),
                },
                output={
                    "log": run.get("log", ""),
                    "commands": run.get("commands", []),
                    "truncated": bool(run.get("truncated")),
                },
            ),
            error=run.get("error") if status == "failed" else None,
        ),
    )
