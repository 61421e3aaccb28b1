"""The app sends a workspace's id as the ``cwd`` of its header's git requests (the TypeScript
daemon's ids are directories): with this daemon's opaque ids the commit button, the branch
switcher and the checkout status must still act on the workspace's directory. Found in the
browser check (docs/ts-clients.md, "Browser check"): the header showed no git actions and the
branch switcher no branches."""

from __future__ import annotations

from pathlib import Path

from e2e.tswire.app_script import git, make_project
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon


def test_a_workspace_id_as_cwd_is_its_directory(ts_daemon: TsDaemon, tmp_path: Path) -> None:
    repo = make_project(tmp_path, tmp_path / "home")
    with TsClient(socket_path=ts_daemon.socket_path) as app:
        app.hello("cid_workspace_id_cwd", client_type="browser")
        opened = app.request("open_project_request", "open_project_response", cwd=str(repo))
        workspace_id = opened["workspace"]["id"]
        assert not workspace_id.startswith("/")
        status = app.request(
            "checkout_status_request", "checkout_status_response", cwd=workspace_id
        )
        assert status["error"] is None, status
        assert (status["isGit"], status["currentBranch"], status["isDirty"]) == (True, "main", True)
        branches = app.request(
            "branch_suggestions_request", "branch_suggestions_response", cwd=workspace_id
        )
        assert branches["error"] is None
        assert "feature/other" in branches["branches"]
        committed = app.request(
            "checkout_commit_request", "checkout_commit_response", cwd=workspace_id, message=""
        )
        assert committed["error"] is None, committed
        assert git(repo, "rev-list", "--count", "HEAD").strip() == "2"
        switched = app.request(
            "checkout_switch_branch_request",
            "checkout_switch_branch_response",
            cwd=workspace_id,
            branch="feature/other",
        )
        assert switched["error"] is None, switched
        assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "feature/other"
        # An id that is no workspace is still answered as a path that is not one.
        unknown = app.request(
            "checkout_status_request", "checkout_status_response", cwd="wks_0000000000000000"
        )
        assert unknown["error"] is not None
