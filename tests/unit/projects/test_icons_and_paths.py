"""Icon validation, storage and discovery; which directories may be opened."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest
from paseo_hookspecs.errors import AccessDenied, InvalidParams
from paseo_store_json import JsonStore

from paseo.projects.icons import MAX_ICON_BYTES, IconStore, discover_icon, sniff_image
from paseo.projects.paths import check_openable
from paseo.projects.service import ProjectRegistry

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
GIF = b"GIF89a" + b"\x00" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8
SVG = b'<?xml version="1.0"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'


@pytest.mark.parametrize(
    ("data", "mime"),
    [
        (PNG, "image/png"),
        (GIF, "image/gif"),
        (JPEG, "image/jpeg"),
        (WEBP, "image/webp"),
        (SVG, "image/svg+xml"),
        (b"<svg onload=alert(1)></svg>", None),
        (b"<svg><script>x</script></svg>", None),
        (b"plain text", None),
        (b"\x00\x00\x01\x00\x01\x00", None),
    ],
)
def test_sniffing(data: bytes, mime: str | None) -> None:
    assert sniff_image(data) == mime


def test_upload_replace_and_clear(tmp_path: Path) -> None:
    home = tmp_path / "home"
    root = tmp_path / "proj"
    root.mkdir()
    (root / "public").mkdir()
    (root / "public" / "favicon.svg").write_bytes(SVG)

    async def scenario() -> None:
        store = JsonStore(home)
        await store.open()
        try:
            icons = IconStore(home / "projects" / "icons")
            registry = ProjectRegistry(store, icons)
            project, _ = await registry.add(str(root))
            found = await registry.icon(project.projectId)
            assert found is not None
            assert found.source == "discovered"
            with pytest.raises(InvalidParams):
                await registry.set_icon(project.projectId, b"not an image")
            with pytest.raises(InvalidParams, match="limit"):
                await registry.set_icon(project.projectId, PNG + b"\x00" * MAX_ICON_BYTES)
            first = await registry.set_icon(project.projectId, PNG)
            second = await registry.set_icon(project.projectId, GIF)
            assert first.customIconRevision != second.customIconRevision
            files = list((home / "projects" / "icons").iterdir())
            assert len(files) == 1
            assert files[0].suffix == ".gif"
            custom = await registry.icon(project.projectId)
            assert custom is not None
            assert (custom.source, custom.data) == ("custom", GIF)
            cleared = await registry.clear_icon(project.projectId)
            assert cleared.customIconRevision is None
            assert list((home / "projects" / "icons").iterdir()) == []
        finally:
            await store.close()

    asyncio.run(scenario())


def test_discovery_prefers_listed_order(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(PNG)
    (tmp_path / "favicon.ico").write_bytes(b"\x00\x00\x01\x00\x01\x00" + b"\x00" * 10)
    icon = discover_icon(str(tmp_path))
    assert icon is not None
    assert icon.mime_type == "image/x-icon"
    assert base64.b64encode(icon.data)


def test_check_openable(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "worktrees" / "abc" / "x").mkdir(parents=True)
    (state / "projects").mkdir()
    ok = tmp_path / "ok"
    ok.mkdir()
    assert check_openable(
        str(ok) + "/../ok/", state_root=str(state), worktrees_root=str(state / "worktrees")
    ) == str(ok)
    assert check_openable(
        str(state / "worktrees" / "abc" / "x"),
        state_root=str(state),
        worktrees_root=str(state / "worktrees"),
    )
    with pytest.raises(AccessDenied):
        check_openable(
            str(state / "projects"), state_root=str(state), worktrees_root=str(state / "worktrees")
        )
    with pytest.raises(AccessDenied):
        check_openable("/", state_root=str(state), worktrees_root=str(state / "worktrees"))


def test_a_remote_session_may_open_the_daemons_worktrees_but_nothing_else_of_its_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    state = tmp_path / "state"  # outside the home, as a PASEO_HOME may be
    worktree = state / "worktrees" / "abc" / "feature-x"
    worktree.mkdir(parents=True)
    (state / "projects").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    roots = {"state_root": str(state), "worktrees_root": str(state / "worktrees")}
    # A worktree the daemon made (the app opens it right after creating it).
    assert check_openable(str(worktree), session_kind="remote", **roots) == str(worktree)
    with pytest.raises(AccessDenied, match="state root"):
        check_openable(str(state / "projects"), session_kind="remote", **roots)
    with pytest.raises(AccessDenied, match="outside the home directory"):
        check_openable(str(elsewhere), session_kind="remote", **roots)
    assert check_openable(
        str(elsewhere), session_kind="remote", project_roots=[str(elsewhere)], **roots
    ) == str(elsewhere)
