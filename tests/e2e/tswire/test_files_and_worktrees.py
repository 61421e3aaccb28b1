"""The app's files, editors, add-project picker, worktree, setup and scripts messages against
a real daemon: every frame validated by the client's strict models; reads stay inside the
workspace; a download token serves its file once over the TypeScript listener's TCP port."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from e2e.tswire.client import TsClient
from e2e.tswire.conftest import TsDaemon
from paseo_tswire.models import files as fm

from paseo.testing.fake_model import RefusingProxy

pytestmark = pytest.mark.e2e

PASEO_JSON = {
    "worktree": {
        "setup": ["echo setup-ran | tee setup.txt"],
        "terminals": [{"name": "dev", "command": "echo dev-terminal"}],
    },
    "scripts": {
        "hello": {"command": "echo hello-script"},
        "web": {
            "type": "service",
            "command": f"{sys.executable} -m http.server $PASEO_PORT --bind 127.0.0.1",
        },
    },
}


def _repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('app')\n")
    (repo / "favicon.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    (repo / "paseo.json").write_text(json.dumps(PASEO_JSON))
    (root / "outside.txt").write_text("not yours")
    (repo / "escape").symlink_to(root / "outside.txt")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, timeout=30)
    return repo


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _explore(app: TsClient, cwd: str, mode: str, path: str) -> dict[str, Any]:
    reply = app.request(
        "file_explorer_request", "file_explorer_response", cwd=cwd, mode=mode, path=path
    )
    return fm.FileExplorer.model_validate(
        {k: v for k, v in reply.items() if k != "__type"}
    ).model_dump()


def test_files_stay_inside_the_workspace_and_download_once(
    ts_daemon: TsDaemon, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    cwd = str(repo)
    with TsClient(socket_path=ts_daemon.socket_path) as app:
        app.hello("cid_files")
        # Nothing is readable before it is a workspace of the daemon.
        assert "not a workspace" in (_explore(app, cwd, "list", ".")["error"] or "")
        opened = app.request("open_project_request", "open_project_response", cwd=cwd)
        assert opened["error"] is None

        listing = _explore(app, cwd, "list", ".")
        names = {e["name"] for e in listing["directory"]["entries"]}
        assert {"src", "paseo.json", "favicon.svg"} <= names
        assert "escape" not in names  # a link out of the workspace is not listed
        text = _explore(app, cwd, "file", "src/app.py")["file"]
        assert (text["kind"], text["encoding"], text["content"]) == (
            "text",
            "utf-8",
            "print('app')\n",
        )
        for path in ("../outside.txt", "escape", str(tmp_path / "outside.txt")):
            assert (
                _explore(app, cwd, "file", path)["error"]
                == "Access outside of workspace is not allowed"
            )

        # acceptBinary: FileBegin (metadata), FileChunk (the bytes), FileEnd.
        app.session(
            {
                "type": "file_explorer_request",
                "requestId": "bin-1",
                "cwd": cwd,
                "mode": "file",
                "path": "src/app.py",
                "acceptBinary": True,
            }
        )
        head = bytes([5]) + b"bin-1"
        begin = app.wait_binary(lambda f: f[:1] == b"\x10" and f[1:7] == head)
        (length,) = struct.unpack(">H", begin[7:9])
        meta = json.loads(begin[9 : 9 + length])
        assert (meta["mime"], meta["size"], meta["encoding"]) == ("text/plain", 13, "utf-8")
        chunk = app.wait_binary(lambda f: f[:1] == b"\x11" and f[1:7] == head)
        assert chunk[7:] == b"print('app')\n"
        assert app.wait_binary(lambda f: f[:1] == b"\x12" and f[1:7] == head) == b"\x12" + head

        token = app.request(
            "file_download_token_request",
            "file_download_token_response",
            cwd=cwd,
            path="src/app.py",
        )
        assert (token["error"], token["fileName"], token["size"]) == (None, "app.py", 13)
        refused = app.request(
            "file_download_token_request", "file_download_token_response", cwd=cwd, path="escape"
        )
        assert (refused["token"], refused["error"]) == (
            None,
            "Access outside of workspace is not allowed",
        )
        base = ts_daemon.tcp_uri.replace("ws://", "http://").removesuffix("/ws")
        url = f"{base}/api/files/download?token={token['token']}"
        assert _get(url) == (200, b"print('app')\n")
        assert _get(url)[0] == 403  # single use
        assert _get(f"{base}/api/files/download")[0] == 400

        # The daemon's own port streams it too (fs.downloadToken's url), in chunks.
        big = bytes(range(256)) * 4096 + b"end"  # 1 MiB and a bit: several chunks
        (repo / "big.bin").write_bytes(big)
        with ts_daemon.client() as rpc:
            issued = rpc.call("fs.downloadToken", {"cwd": cwd, "path": "big.bin"})
        assert (issued["mimeType"], issued["size"]) == ("application/octet-stream", len(big))
        assert issued["url"].startswith("http://127.0.0.1:")
        assert _get(issued["url"]) == (200, big)
        assert _get(issued["url"])[0] == 403

        icon = app.request("project_icon_request", "project_icon_response", cwd=cwd)
        assert icon["error"] is None
        assert icon["icon"]["mimeType"] == "image/svg+xml"

        editors = app.request("list_available_editors_request", "list_available_editors_response")
        assert editors["error"] is None
        missing = app.request(
            "open_in_editor_request", "open_in_editor_response", path=cwd, editorId="no-such-editor"
        )
        assert "Unknown editor target" in missing["error"]

        found = app.request(
            "directory_suggestions_request", "directory_suggestions_response", query="sr", cwd=cwd
        )
        assert {"path": "src", "kind": "directory"} in found["entries"]
        assert found["directories"] == [os.path.realpath(repo / "src")]


def test_a_worktree_from_the_app_runs_setup_opens_terminals_and_runs_scripts(
    ts_daemon: TsDaemon, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    with TsClient(socket_path=ts_daemon.socket_path) as app:
        app.hello("cid_worktree")
        assert (
            app.request("open_project_request", "open_project_response", cwd=str(repo))["error"]
            is None
        )
        created = app.request(
            "create_paseo_worktree_request",
            "create_paseo_worktree_response",
            timeout=120,
            cwd=str(repo),
            worktreeSlug="feature-x",
        )
        assert created["error"] is None, created
        workspace = created["workspace"]
        assert workspace["workspaceKind"] == "worktree"
        assert [s["scriptName"] for s in workspace["scripts"]] == ["hello", "web"]
        # The setup left an untracked file; the new branch is level with its base.
        git_runtime = workspace["gitRuntime"]
        assert git_runtime["isDirty"] is True
        assert git_runtime["aheadBehind"] == {"ahead": 0, "behind": 0}
        # Untracked files are no diff stat (git diff), and no GitHub remote: features off.
        assert workspace["diffStat"] is None
        assert workspace["githubRuntime"] == {
            "featuresEnabled": False,
            "pullRequest": None,
            "error": None,
        }

        progress = app.wait_for(
            lambda m: (
                m["type"] == "workspace_setup_progress"
                and m["payload"]["workspaceId"] == workspace["id"]
                and m["payload"]["status"] == "completed"
            )
        )["payload"]
        assert progress["detail"]["branchName"]
        assert progress["detail"]["worktreePath"].endswith("feature-x")
        status = app.request(
            "workspace_setup_status_request",
            "workspace_setup_status_response",
            workspaceId=workspace["id"],
        )
        snapshot = status["snapshot"]
        assert snapshot["status"] == "completed"
        assert [c["command"] for c in snapshot["detail"]["commands"]] == [
            "echo setup-ran | tee setup.txt"
        ]
        assert "setup-ran" in snapshot["detail"]["log"]
        unknown = app.request(
            "workspace_setup_status_request", "workspace_setup_status_response", workspaceId="nope"
        )
        assert unknown["snapshot"] is None

        with ts_daemon.client() as rpc:
            terminals = rpc.call("terminal.list", {"workspaceId": workspace["id"]})["terminals"]
        assert len(terminals) == 1  # worktree.terminals' "dev"

        started = app.request(
            "start_workspace_script_request",
            "start_workspace_script_response",
            workspaceId=workspace["id"],
            scriptName="hello",
        )
        assert started["error"] is None
        assert started["terminalId"]
        # A service: started through script.start; its status reaches the app as it changes.
        app.request("fetch_workspaces_request", "fetch_workspaces_response", subscribe={})
        service = app.request(
            "start_workspace_script_request",
            "start_workspace_script_response",
            workspaceId=workspace["id"],
            scriptName="web",
        )
        assert (service["error"], service["terminalId"]) == (None, None)

        def web(message: dict[str, Any]) -> dict[str, Any] | None:
            if message["type"] != "script_status_update":
                return None
            if message["payload"]["workspaceId"] != workspace["id"]:
                return None
            return next(s for s in message["payload"]["scripts"] if s["scriptName"] == "web")

        healthy = app.wait_for(lambda m: (web(m) or {}).get("health") == "healthy", timeout=60)
        shown = web(healthy)
        assert shown is not None
        assert (shown["lifecycle"], shown["type"]) == ("running", "service")
        assert isinstance(shown["port"], int)
        with ts_daemon.client() as rpc:
            rpc.call("script.stop", {"cwd": workspace["workspaceDirectory"], "name": "web"})
        app.wait_for(lambda m: (web(m) or {}).get("lifecycle") == "stopped", timeout=60)
        missing = app.request(
            "start_workspace_script_request",
            "start_workspace_script_response",
            workspaceId=workspace["id"],
            scriptName="nope",
        )
        assert "not found" in missing["error"]


def test_a_remote_session_reads_only_inside_workspaces(ts_daemon: TsDaemon, tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    created = json.loads(
        ts_daemon.cli("daemon", "token", "create", "--name", "files", "-o", "json").stdout
    )
    with TsClient(
        uri=ts_daemon.tcp_uri, subprotocols=[f"paseo.bearer.{created['token']}"]
    ) as remote:
        remote.hello("cid_files_remote", client_type="mobile")
        # Not a workspace yet: neither its listing nor a download nor an editor.
        assert "not a workspace" in (_explore(remote, str(repo), "list", ".")["error"] or "")
        assert "not a workspace" in (
            remote.request(
                "file_download_token_request", "file_download_token_response",
                cwd=str(tmp_path), path="outside.txt",
            )["error"] or ""
        )  # fmt: skip
        # A remote client may not open a directory outside the home; this machine's user may.
        ts_daemon.cli("project", "add", str(repo))
        assert _explore(remote, str(repo), "file", "src/app.py")["error"] is None
        for path in ("../outside.txt", "escape"):
            answer = _explore(remote, str(repo), "file", path)
            assert answer["error"] == "Access outside of workspace is not allowed"


SCRIPTED_PLUGIN = Path(__file__).resolve().parents[2] / "integration" / "agents" / "scripted_agent"


def test_an_agent_asked_for_in_a_new_worktree_starts_there(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config(plugins={"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}})
    daemon.start()
    repo = _repo(tmp_path)
    try:
        with TsClient(socket_path=daemon.socket_path) as app:
            app.hello("cid_worktree_agent")
            created = app.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=120,
                config={"provider": "scripted", "cwd": str(repo)},
                git={"createWorktree": True, "worktreeSlug": "agent-wt"},
            )
            assert created["status"] == "agent_created", created
            cwd = created["agent"]["cwd"]
            assert cwd != str(repo)
            assert cwd.endswith("agent-wt")
            assert (Path(cwd) / "setup.txt").read_text() == "setup-ran\n"
            # Its setup is the first entry of its timeline, as the TypeScript daemon shows it.
            timeline = app.request(
                "fetch_agent_timeline_request",
                "fetch_agent_timeline_response",
                agentId=created["agent"]["id"],
                direction="tail",
                limit=0,
                projection="canonical",
            )
            first = timeline["entries"][0]["item"]
            assert (first["type"], first["name"], first["status"]) == (
                "tool_call",
                "paseo_worktree_setup",
                "completed",
            )
            detail = first["detail"]
            assert detail["type"] == "worktree_setup"
            assert detail["worktreePath"] == cwd
            assert [c["command"] for c in detail["commands"]] == ["echo setup-ran | tee setup.txt"]
            assert "setup-ran" in detail["log"]
            # A second agent in that worktree is not shown the setup again.
            again = app.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=120,
                config={"provider": "scripted", "cwd": cwd},
            )
            later = app.request(
                "fetch_agent_timeline_request",
                "fetch_agent_timeline_response",
                agentId=again["agent"]["id"],
                direction="tail",
                limit=0,
                projection="canonical",
            )
            assert all(e["item"].get("name") != "paseo_worktree_setup" for e in later["entries"])
    finally:
        daemon.cleanup()


def test_a_worktree_is_made_from_a_checkout_inside_a_plain_project(
    tmp_path: Path, proxy: RefusingProxy
) -> None:
    # `paseo run` (the TypeScript CLI's too) in a plain directory makes it a project; a Git
    # checkout inside it is still a repository a worktree can be made from.
    daemon = TsDaemon(tmp_path / "d", proxy)
    daemon.write_config(plugins={"scripted": {"source": "directory", "path": str(SCRIPTED_PLUGIN)}})
    daemon.start()
    outer = tmp_path / "outer"
    repo = _repo(outer)
    try:
        with TsClient(socket_path=daemon.socket_path) as cli:
            cli.hello("cid_nested_checkout")
            plain = cli.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=120,
                config={"provider": "scripted", "cwd": str(outer)},
            )
            assert plain["status"] == "agent_created", plain
            created = cli.request(
                "create_agent_request",
                ("status", "agent_created", "agent_create_failed"),
                timeout=120,
                config={"provider": "scripted", "cwd": str(repo)},
                git={"createWorktree": True, "worktreeSlug": "nested-wt"},
            )
            assert created["status"] == "agent_created", created
            assert created["agent"]["cwd"].endswith("nested-wt")
            assert (Path(created["agent"]["cwd"]) / "src" / "app.py").exists()
    finally:
        daemon.cleanup()
