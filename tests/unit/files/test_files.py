"""What a client may read of a workspace: paths stay inside it (``..`` and links out are
refused), reads are bounded, download tokens expire and are single-use, suggestions follow
the TypeScript picker's rules (hidden names never, links only inside the root)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from paseo_hookspecs.errors import AccessDenied, InvalidParams

from paseo.files import explorer, suggestions
from paseo.files.downloads import DownloadTokens, download_app
from paseo.files.scoped import OUTSIDE, resolve
from paseo.files.service import FilesService
from paseo.worktrees.setup_status import SetupLog


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / ".hidden").mkdir()
    (root / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n....")
    (root / "blob.bin").write_bytes(b"\x00\x01\x02")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("secret")
    (root / "out-link").symlink_to(outside)
    (root / "key-link").symlink_to(outside / "key.txt")
    (root / "in-link").symlink_to(root / "src" / "main.py")
    return root


def test_dot_dot_and_links_out_of_the_workspace_are_refused(tree: Path) -> None:
    for path in (
        "../secret/key.txt",
        "src/../../secret",
        "out-link/key.txt",
        "key-link",
        "out-link",
    ):
        with pytest.raises(AccessDenied, match=OUTSIDE):
            resolve(str(tree), path)
    with pytest.raises(AccessDenied):
        explorer.read_file(str(tree), str(tree.parent / "secret" / "key.txt"))
    # Inside stays inside: a link to a workspace file, an absolute path in it, a missing file.
    assert resolve(str(tree), "in-link") == str(tree / "in-link")
    assert resolve(str(tree), str(tree / "src")) == str(tree / "src")
    assert resolve(str(tree), "src/new.txt") == str(tree / "src" / "new.txt")


def test_a_listing_leaves_out_links_out_and_classifies_files(tree: Path) -> None:
    path, entries = explorer.list_directory(str(tree), ".")
    names = {e.name: e.kind for e in entries}
    assert path == "."
    assert "out-link" not in names
    assert "key-link" not in names
    assert names["src"] == "directory"
    assert names["in-link"] == "file"
    assert explorer.read_file(str(tree), "src/main.py").kind == "text"
    assert explorer.read_file(str(tree), "image.png").mimeType == "image/png"
    assert explorer.read_file(str(tree), "blob.bin").kind == "binary"
    with pytest.raises(InvalidParams, match="download it instead"):
        explorer.read_file(str(tree), "src/main.py", limit=4)
    with pytest.raises(InvalidParams, match="not a directory"):
        explorer.list_directory(str(tree), "src/main.py")


def test_a_download_token_is_single_use_and_expires(tree: Path) -> None:
    now = [100.0]
    tokens = DownloadTokens(ttl=60, clock=lambda: now[0])
    file = explorer.downloadable(str(tree), "src/main.py")
    first = tokens.issue(file)
    assert tokens.consume(first.token) is not None
    assert tokens.consume(first.token) is None  # spent
    late = tokens.issue(file)
    now[0] += 60
    assert tokens.consume(late.token) is None  # expired
    assert tokens.consume("made-up") is None


def _get(app: object, query: bytes) -> tuple[int, bytes]:
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/api/files/download", "query_string": query}
    asyncio.run(app(scope, receive, send))  # type: ignore[operator]
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")  # type: ignore[misc]
    return int(sent[0]["status"]), body  # type: ignore[call-overload]


def test_the_download_route_serves_a_token_once(tree: Path) -> None:
    tokens = DownloadTokens()
    app = download_app(tokens)
    ticket = tokens.issue(explorer.downloadable(str(tree), "src/main.py"))
    assert _get(app, b"token=" + ticket.token.encode()) == (200, b"print('hi')\n")
    assert _get(app, b"token=" + ticket.token.encode())[0] == 403
    assert _get(app, b"")[0] == 400


def test_only_known_workspaces_are_readable(tree: Path, tmp_path: Path) -> None:
    async def roots() -> list[str]:
        return [str(tree)]

    service = FilesService(roots=roots, home=str(tmp_path))
    assert asyncio.run(service.workspace_root(str(tree / "src"))) == str(tree / "src")
    for cwd in (str(tmp_path / "secret"), str(tree / "out-link"), "relative/dir"):
        with pytest.raises((AccessDenied, InvalidParams)):
            asyncio.run(service.workspace_root(cwd))


def test_home_suggestions_follow_the_picker_rules(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for d in ("projects/paseo", "projects/other", ".config/paseo", "work/paseo-app"):
        (home / d).mkdir(parents=True)
    (tmp_path / "elsewhere" / "paseo").mkdir(parents=True)
    (home / "link-out").symlink_to(tmp_path / "elsewhere")
    found = suggestions.home_directories(str(home), "paseo")
    real = os.path.realpath(home)
    # Exact segment matches first; hidden directories and links out of the home never.
    assert found == [f"{real}/projects/paseo", f"{real}/work/paseo-app"]
    assert suggestions.home_directories(str(home), "~/projects/ot") == [f"{real}/projects/other"]
    assert suggestions.home_directories(str(home), f"{home}/projects/pa") == [
        f"{real}/projects/paseo"
    ]
    assert suggestions.home_directories(str(home), "~") == [
        f"{real}/projects",
        f"{real}/work",
    ]
    assert suggestions.home_directories(str(home), "/etc/") == []
    assert len(suggestions.home_directories(str(home), "~/", limit=1)) == 1


def test_workspace_completions_skip_build_output(tree: Path) -> None:
    (tree / "node_modules" / "main").mkdir(parents=True)
    found = suggestions.workspace_entries(str(tree), "main", files=True)
    paths = {s.path for s in found}
    assert "src/main.py" in paths
    assert not any(p.startswith("node_modules") for p in paths)
    assert suggestions.workspace_entries(str(tree), "../") == []


def test_the_setup_log_keeps_each_workspaces_last_setup() -> None:
    log = SetupLog()

    def event(kind: str, **fields: object) -> None:
        base = {"index": fields.pop("index", 1), "total": 2, "command": "make", "cwd": "/w"}
        log.observe(
            "worktree.progress",
            {
                "worktreeId": "wt",
                "workspaceId": "ws1",
                "phase": "setup",
                "event": {"type": kind, **base, **fields},
            },
        )

    event("command_started")
    event("output", stream="stdout", chunk="built\n")
    run = log.get("ws1")
    assert run is not None
    assert run.status == "running"
    event("command_completed", exitCode=0, durationMs=5)
    assert run.status == "running"  # one of two
    event("command_started", index=2)
    event("command_completed", index=2, exitCode=3, durationMs=1)
    assert (run.status, run.log, run.commands[1].exitCode) == ("failed", "built\n", 3)
    assert run.error is not None
    assert "exit 3" in run.error
    assert log.get("other") is None
    # Handed to the first agent started in the workspace, once; a running setup is not.
    claimed = log.claim("ws1")
    assert claimed is not None
    assert claimed["status"] == "failed"
    assert log.claim("ws1") is None
    event("command_started")
    assert log.claim("ws1") is None
