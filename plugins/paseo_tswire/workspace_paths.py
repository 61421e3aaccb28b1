"""The app names a workspace's directory by the workspace's id.

The TypeScript daemon's workspace id *is* its directory, and the app relies on it: parts of
the workspace screen (the header's git actions, the branch switcher, the open-in-editor button)
send the route's workspace id as the ``cwd`` of ``checkout_status_request``,
``checkout_commit_request``, ``branch_suggestions_request``, ``checkout_switch_branch_request``
and the like, while others send the descriptor's ``workspaceDirectory``. This daemon's ids are
opaque (``wks_…``), so an inbound ``cwd`` that is not a path but names a workspace is replaced
by that workspace's directory before the request is validated and handled — through the
session's own ``workspace.get``, so a session sees only what it may. Anything else (a path, an
unknown name) is left for the handler to answer as before.
"""

from __future__ import annotations

import re
from typing import Any

from paseo_tswire.port import Failure

_OPAQUE = re.compile(r"wks_[0-9A-Za-z_-]+")


async def resolve_cwd(session: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with a workspace id in ``cwd`` replaced by the workspace's directory."""
    cwd = body.get("cwd")
    if not isinstance(cwd, str) or not _OPAQUE.fullmatch(cwd):
        return body
    try:
        found = await session.call("workspace.get", {"workspaceId": cwd})
    except Failure:
        return body
    directory = (found.get("workspace") or {}).get("cwd")
    return {**body, "cwd": directory} if isinstance(directory, str) and directory else body
