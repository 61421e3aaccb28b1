"""The editors of this machine: the programs on the daemon's ``PATH`` that open a directory or
file in a window (the TypeScript daemon's ``editor-targets.ts``, plus JetBrains IDEA and
Sublime Text). A terminal editor (vim) is not offered: it needs the terminal the daemon has
not got.

An editor is started with an argument vector, never a shell string, in its own session with
no inherited standard streams; the daemon reaps it when it exits (most of these launchers hand
the path to a running instance and exit at once).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
from dataclasses import dataclass

from paseo_hookspecs.errors import InvalidParams, NotFound, Unavailable

log = logging.getLogger("paseo.files")


@dataclass(frozen=True)
class Editor:
    id: str
    label: str
    command: str
    platforms: tuple[str, ...] = ()
    """``sys.platform`` prefixes it runs on (empty: every platform but those excluded)."""
    excluded: tuple[str, ...] = ()


EDITORS = (
    Editor("cursor", "Cursor", "cursor"),
    Editor("vscode", "VS Code", "code"),
    Editor("webstorm", "WebStorm", "webstorm"),
    Editor("idea", "IntelliJ IDEA", "idea"),
    Editor("zed", "Zed", "zed"),
    Editor("sublime", "Sublime Text", "subl"),
    Editor("finder", "Finder", "open", platforms=("darwin",)),
    Editor("explorer", "Explorer", "explorer", platforms=("win32",)),
    Editor("file-manager", "File Manager", "xdg-open", excluded=("darwin", "win32")),
)


def _supported(editor: Editor, platform: str) -> bool:
    if editor.platforms and not platform.startswith(editor.platforms):
        return False
    return not platform.startswith(editor.excluded) if editor.excluded else True


def available(path_env: str | None = None, platform: str = sys.platform) -> list[Editor]:
    """The editors whose program is on ``path_env`` (default: the daemon's ``PATH``)."""
    return [
        e
        for e in EDITORS
        if _supported(e, platform) and shutil.which(e.command, path=path_env) is not None
    ]


class Launcher:
    """Starts editors and reaps them (see the module docstring)."""

    def __init__(self, path_env: str | None = None) -> None:
        self.path_env = path_env
        self._children: set[asyncio.Task[None]] = set()

    async def open(self, editor_id: str, path: str) -> Editor:
        if not os.path.isabs(path):
            raise InvalidParams("Editor target path must be an absolute local path")
        if not await asyncio.to_thread(os.path.exists, path):
            raise NotFound(f"Path does not exist: {path}", data={"path": path})
        editor = next((e for e in EDITORS if e.id == editor_id), None)
        if editor is None:
            raise InvalidParams(f"Unknown editor target: {editor_id}")
        program = shutil.which(editor.command, path=self.path_env)
        if program is None or not _supported(editor, sys.platform):
            found = ", ".join(e.id for e in available(self.path_env)) or "none"
            raise Unavailable(
                f"Editor target unavailable: {editor.label} ({editor.command!r} is not on the "
                f"daemon's PATH; found: {found})",
                data={"editorId": editor_id},
            )
        process = await asyncio.create_subprocess_exec(
            program,
            path,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
        )
        task = asyncio.get_running_loop().create_task(self._reap(editor, process))
        self._children.add(task)
        task.add_done_callback(self._children.discard)
        return editor

    @staticmethod
    async def _reap(editor: Editor, process: asyncio.subprocess.Process) -> None:
        code = await process.wait()
        if code:
            log.info("%s exited with status %s", editor.command, code)

    async def stop(self) -> None:
        """Stop waiting for editors still open (they are in their own session and keep
        running); their exit is no longer the daemon's to collect once it stops."""
        for task in list(self._children):
            task.cancel()
