"""A recorded message script of the real web app: what it sent to this daemon in a browser run
(``scripts/app-browser-check.py``, docs/ts-clients.md "Browser check") and what it was answered,
made replayable.

A recording holds machine-specific values: the run's temporary directory and the ids the daemon
chose (workspaces, projects, agents, terminals, the server). :func:`normalize` replaces the
directory by ``<ROOT>`` and every id that the daemon *sent* (under an id key) by ``<id:N>``,
in the answers and in the requests that echo them. :class:`Bindings` undoes it during a
replay: ``<ROOT>`` is the replay's directory, and each ``<id:N>`` is learnt from the live answer
standing where the recorded answer had it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = "<ROOT>"
ID_KEYS = frozenset(
    {"id", "workspaceId", "projectId", "serverId", "agentId", "terminalId", "sessionId"}
)
PLACEHOLDER = re.compile(r"<id:\d+>")
GENERATED = re.compile(
    r"[A-Za-z]{1,8}[_-][0-9A-Za-z_-]{8,}"
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|[0-9a-f]{32}"
)
"""What a daemon-chosen id looks like (``wks_…``, ``prj_…``, a UUID, a terminal's 32 hex
digits); provider ids such as
``claude`` under an ``id`` key are names, the same in every run, and stay."""


def _walk(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    yield key, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, key)


def _map_strings(value: Any, fn: Any) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


def normalize(entries: Iterable[dict[str, Any]], root: str) -> list[dict[str, Any]]:
    """The first connection of a browser recording (``frames.jsonl``), text frames only, with
    ``root`` and the daemon's ids replaced by placeholders."""
    frames: list[dict[str, Any]] = []
    for entry in entries:
        if entry["dir"] == "close":
            break
        if entry["dir"] in ("sent", "received") and "frame" in entry:
            frames.append({"dir": entry["dir"], "frame": json.loads(entry["frame"])})
    ids: dict[str, str] = {}
    for item in frames:
        if item["dir"] != "received":
            continue
        for key, value in _walk(item["frame"]):
            fresh = isinstance(value, str) and value not in ids and GENERATED.fullmatch(value)
            if key in ID_KEYS and fresh:
                ids[value] = f"<id:{len(ids)}>"
    roots = sorted({root, str(Path(root).resolve())}, key=len, reverse=True)

    def replace(text: str) -> str:
        if text in ids:
            return ids[text]
        for r in roots:
            text = text.replace(r, ROOT)
        return text

    return [{**item, "frame": _map_strings(item["frame"], replace)} for item in frames]


class Bindings:
    """Placeholders → the replay's values."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.ids: dict[str, str] = {}

    def apply(self, frame: Any) -> Any:
        def fill(text: str) -> str:
            if PLACEHOLDER.fullmatch(text):
                if text not in self.ids:
                    raise KeyError(f"{text} was not seen in an answer before the app used it")
                return self.ids[text]
            return text.replace(ROOT, self.root)

        return _map_strings(frame, fill)

    def learn(self, recorded: Any, live: Any) -> None:
        """Bind each placeholder of ``recorded`` to the value at the same place in ``live``
        (lists are matched by position, as the answers to the same requests come in the
        same order)."""
        if isinstance(recorded, str) and PLACEHOLDER.fullmatch(recorded):
            if isinstance(live, str):
                self.ids.setdefault(recorded, live)
        elif isinstance(recorded, dict) and isinstance(live, dict):
            for key, value in recorded.items():
                if key in live:
                    self.learn(value, live[key])
        elif isinstance(recorded, list) and isinstance(live, list):
            for r, v in zip(recorded, live, strict=False):
                self.learn(r, v)


def request_id(frame: dict[str, Any]) -> str | None:
    message = frame.get("message")
    if frame.get("type") != "session" or not isinstance(message, dict):
        return None
    found = message.get("requestId")
    if found is None and isinstance(message.get("payload"), dict):
        found = message["payload"].get("requestId")
    return found if isinstance(found, str) else None


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Browser Check",
    "GIT_AUTHOR_EMAIL": "check@example.invalid",
    "GIT_COMMITTER_NAME": "Browser Check",
    "GIT_COMMITTER_EMAIL": "check@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *argv: str) -> str:
    done = subprocess.run(
        ["git", *argv], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True, text=True,
        capture_output=True, timeout=60,
    )  # fmt: skip
    return done.stdout


def make_project(root: Path, home: Path) -> Path:
    """The browser check's world, the same in the recording and in every replay: directories
    under the daemon user's ``home`` for the add-project dialog to suggest, and a Git project
    ``home/projects/demo`` with an ``origin`` on disk (``root/origin.git``), a second branch,
    a ``paseo.json`` (a worktree setup and a ``stamp`` script) and ``src/app.py`` modified."""
    for name in ("alpha-service", "beta-tools", "projects/gamma-site"):
        (home / name).mkdir(parents=True, exist_ok=True)
    repo = home / "projects" / "demo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    # The daemon commits here for the app: an identity of the repository's own, whatever the
    # daemon's environment.
    git(repo, "config", "user.name", GIT_ENV["GIT_AUTHOR_NAME"])
    git(repo, "config", "user.email", GIT_ENV["GIT_AUTHOR_EMAIL"])
    (repo / "README.md").write_text("# Demo\n\nThe browser check's project.\n")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("def greet():\n    return 'hello'\n")
    config = {
        "worktree": {"setup": "echo setup-ran > .setup-marker"},
        "scripts": {"stamp": {"command": "date +%s > script-ran.txt"}},
    }
    (repo / "paseo.json").write_text(json.dumps(config, indent=2) + "\n")
    (repo / ".gitignore").write_text("script-ran.txt\n.setup-marker\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Initial commit")
    git(repo, "branch", "feature/other")
    origin = root / "origin.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(origin))
    git(repo, "remote", "add", "origin", str(origin))
    git(repo, "push", "-q", "-u", "origin", "main", "feature/other")
    (repo / "src" / "app.py").write_text(
        "def greet():\n    return 'hello, browser'\n\n\ndef wave():\n    return 'o/'\n"
    )
    return repo
