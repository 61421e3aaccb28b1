"""The ``files`` kernel service: what a session may read of the workspaces, and the editors.

Every read names a workspace directory (``cwd``) and a path in it. The directory must be one
this daemon knows — a workspace's directory or checkout root, or a project root, or below
one — for every session kind: a client reads workspaces, never the machine. The path is then
resolved inside that directory (:mod:`paseo.files.scoped`). The add-project picker searches
the daemon user's home directory only (names of directories, never their contents).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from paseo_hookspecs.errors import AccessDenied, InvalidParams
from paseo_hookspecs.http import AsgiApp

from paseo.files.downloads import DOWNLOAD_PATH, DownloadTokens, Ticket, download_app
from paseo.files.editors import Editor, Launcher
from paseo.files.editors import available as available_editors
from paseo.files.scoped import inside

if TYPE_CHECKING:
    # The explorer and the suggestions run on a client's first read or completion: an
    # empty daemon (no client yet) never imports them.
    from paseo.files import explorer, suggestions

Roots = Callable[[], Awaitable[list[str]]]
"""The directories clients may read below: workspaces' and projects' (the placement's)."""

Mount = Callable[[str, AsgiApp], Callable[[], None]]
"""``HttpMounting.mount_http``: the download route goes on the daemon's TCP address."""


def _absolute(cwd: str) -> str:
    text = os.path.expanduser(cwd.strip())
    if not text or not os.path.isabs(text):
        raise InvalidParams("cwd must be an absolute workspace directory", data={"cwd": cwd})
    return os.path.normpath(text)


class FilesService:
    name = "files"

    def __init__(
        self,
        *,
        roots: Roots,
        home: str,
        http_url: Callable[[str], str | None] = lambda _path: None,
        mount: Mount | None = None,
        path_env: str | None = None,
    ) -> None:
        self._mount = mount
        self._unmount: Callable[[], None] | None = None
        self._roots = roots
        self.home = home
        self._http_url = http_url
        self.tokens = DownloadTokens()
        self.download_app = download_app(self.tokens)
        self.launcher = Launcher(path_env)
        self.path_env = path_env

    async def start(self) -> None:
        if self._mount is not None:
            self._unmount = self._mount(DOWNLOAD_PATH, self.download_app)

    async def stop(self) -> None:
        if self._unmount is not None:
            self._unmount()
            self._unmount = None
        await self.launcher.stop()

    async def workspace_root(self, cwd: str) -> str:
        """``cwd`` normalized, if it is inside a known workspace or project, else
        :class:`AccessDenied`."""
        path = _absolute(cwd)
        roots = await self._roots()
        # Compared resolved: a link inside a workspace that points out of it is not a way in.
        real, real_roots = await asyncio.to_thread(
            lambda: (os.path.realpath(path), [os.path.realpath(r) for r in roots])
        )
        if any(inside(root, real) for root in real_roots):
            return path
        raise AccessDenied(
            f"{path} is not a workspace of this daemon (open it as a project first)",
            data={"cwd": cwd},
        )

    async def list_dir(self, cwd: str, path: str | None) -> tuple[str, str, list[explorer.Entry]]:
        from paseo.files import explorer

        root = await self.workspace_root(cwd)
        relative, entries = await asyncio.to_thread(explorer.list_directory, root, path)
        return root, relative, entries

    async def read(self, cwd: str, path: str) -> tuple[str, explorer.FileRead]:
        from paseo.files import explorer

        root = await self.workspace_root(cwd)
        return root, await asyncio.to_thread(explorer.read_file, root, path)

    async def download_token(self, cwd: str, path: str) -> tuple[str, Ticket, str | None]:
        """``(root, ticket, url)``; ``url`` is the route on the daemon's own TCP address (a
        TypeScript client builds its own from the address it connected to)."""
        from paseo.files import explorer

        root = await self.workspace_root(cwd)
        file = await asyncio.to_thread(explorer.downloadable, root, path)
        ticket = self.tokens.issue(file)
        url = self._http_url(DOWNLOAD_PATH)
        return root, ticket, f"{url}?token={ticket.token}" if url else None

    async def suggest(
        self,
        query: str,
        *,
        cwd: str | None = None,
        files: bool = False,
        dirs: bool = True,
        limit: int | None = None,
    ) -> tuple[list[str], list[suggestions.Suggestion]]:
        """``(absolute directories, entries)``: the home picker's without ``cwd``, else the
        workspace's completions (entries relative to it, directories absolute)."""
        from paseo.files import suggestions

        if cwd:
            root = await self.workspace_root(cwd)
            found = await asyncio.to_thread(
                suggestions.workspace_entries, root, query, limit, files=files, dirs=dirs
            )
            real = await asyncio.to_thread(os.path.realpath, root)
            directories = [os.path.join(real, e.path) for e in found if e.kind == "directory"]
            return directories, found
        paths = await asyncio.to_thread(suggestions.home_directories, self.home, query, limit)
        return paths, [suggestions.Suggestion(p, "directory") for p in paths]

    def editors(self) -> list[Editor]:
        return available_editors(self.path_env)

    async def open_in_editor(self, editor_id: str, path: str) -> Editor:
        # An editor is opened on a workspace's files only, as they are read.
        return await self.launcher.open(editor_id, await self.workspace_root(path))

    def describe(self) -> dict[str, Any]:
        return {"pendingDownloads": len(self.tokens)}
