"""The folder's protocol: which files mean what, read and written without the daemon.

For a prompt ``NAME.prompt`` (``NAME``: letters, digits, ``.``, ``_``, ``-``):

``NAME.agent``
    the id of the agent started on it (written by the bridge): the prompt is taken, even once
    that agent is deleted. Remove it (and the agent) to start the prompt afresh.
``NAME.reply``
    the agent's latest reply, rewritten after each turn.
``NAME.log``
    every timeline entry of the agent, one JSON object a line (``seq``, ``timestamp``, the event).
``NAME.permission.json``
    the permission request waiting for an answer (``requestId``, ``title``, ``toolName``,
    ``input``, …); removed once it is answered or withdrawn.
``NAME.answer``
    written by the user: ``allow``, or ``deny`` and optionally why (``deny not that file``).
    Consumed (removed) when the bridge has answered with it.
``NAME.error``
    what went wrong (a create that failed, an answer that could not be given). While it exists
    a prompt without an agent is not retried: remove it to try again.

Everything the bridge writes is written atomically (a reader never sees half a file), except
the log, which only grows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paseo_hookspecs.agents import PermissionAnswer
from paseo_hookspecs.atomic import atomic_write_json, atomic_write_text, is_temp_file
from paseo_hookspecs.events import PermissionRequest

PROMPT = ".prompt"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class Files:
    """The files of one prompt ``name`` in ``folder``."""

    folder: Path
    name: str

    def _path(self, suffix: str) -> Path:
        return self.folder / f"{self.name}{suffix}"

    @property
    def prompt(self) -> Path:
        return self._path(PROMPT)

    @property
    def agent(self) -> Path:
        return self._path(".agent")

    @property
    def reply(self) -> Path:
        return self._path(".reply")

    @property
    def log(self) -> Path:
        return self._path(".log")

    @property
    def permission(self) -> Path:
        return self._path(".permission.json")

    @property
    def answer(self) -> Path:
        return self._path(".answer")

    @property
    def error(self) -> Path:
        return self._path(".error")

    def write_error(self, message: str) -> None:
        atomic_write_text(self.error, message.rstrip("\n") + "\n")

    def write_reply(self, text: str) -> None:
        atomic_write_text(self.reply, text)

    def append_log(self, line: dict[str, Any]) -> None:
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")

    def write_permission(self, agent_id: str, request: PermissionRequest) -> None:
        atomic_write_json(
            self.permission,
            {
                "agentId": agent_id,
                "requestId": request.id,
                "kind": request.kind,
                "title": request.title,
                "description": request.description,
                "toolName": request.toolName,
                "input": request.input,
                "answer": f"write allow or deny to {self.answer.name}",
            },
        )

    def pending_request_id(self) -> str | None:
        """The request ``NAME.permission.json`` names (``None``: none, or unreadable)."""
        try:
            document = json.loads(self.permission.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        request_id = document.get("requestId") if isinstance(document, dict) else None
        return request_id if isinstance(request_id, str) else None


def prompt_names(folder: Path) -> list[str]:
    """The names of the prompts in ``folder``, sorted (temporary files of atomic writes and
    names outside :data:`NAME` are skipped)."""
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    names = [
        path.name[: -len(PROMPT)]
        for path in entries
        if path.name.endswith(PROMPT) and not is_temp_file(path) and path.is_file()
    ]
    return sorted(name for name in names if NAME.match(name))


def answer_names(folder: Path) -> list[str]:
    """The names that have an ``.answer`` file waiting."""
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    names = [p.name[: -len(".answer")] for p in entries if p.name.endswith(".answer")]
    return sorted(name for name in names if NAME.match(name))


class BadAnswer(ValueError):
    """An ``.answer`` file that says neither allow nor deny."""


def parse_answer(text: str) -> PermissionAnswer:
    """``allow`` -> allow; ``deny [why]`` -> deny with the message (case and spaces ignored)."""
    word, _, rest = text.strip().partition(" ")
    word = word.lower()
    if word == "allow":
        return PermissionAnswer(behavior="allow")
    if word == "deny":
        return PermissionAnswer(behavior="deny", message=rest.strip() or None)
    raise BadAnswer(f"the answer must start with allow or deny, not {text.strip()[:40]!r}")
