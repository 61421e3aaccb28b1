"""The metadata tasks: what the internal agent is asked, the JSON schema its answer must fit,
and how an answer becomes a title, a branch name, a commit message or change-request text.

Everything here is pure: :mod:`paseo.metadata.service` runs the agent. A reader never trusts
the answer: a missing field, a wrong type or an empty text is "no answer" (``None``), and the
caller falls back to what it does without generation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from paseo.git.refname import branch_name_problem

INSTRUCTIONS = (
    "You write metadata for a software project: titles, git branch names, commit messages and "
    "pull request text. Do not use tools, do not change files. Answer with one JSON object "
    "matching the requested schema and nothing else."
)
"""The internal agent's system prompt."""

CONTEXT_LIMIT = 6000
"""Characters of a prompt or diff the agent sees: enough to name the work, bounded in cost."""

TITLE_LIMIT = 60
BRANCH_LIMIT = 50
SUBJECT_LIMIT = 72


def _schema(*fields: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in fields},
        "required": list(fields),
        "additionalProperties": False,
    }


TASK_KINDS = ("title", "branch", "commit", "change-request")
"""Every :attr:`Task.kind` (the internal agents' ``paseo.metadata`` label values)."""


@dataclass(frozen=True)
class Task:
    """One request to the internal agent."""

    kind: str
    prompt: str
    schema: dict[str, Any]


def _context(text: str) -> str:
    text = text.strip()
    return text if len(text) <= CONTEXT_LIMIT else text[:CONTEXT_LIMIT] + "\n[…cut]"


def title_task(first_prompt: str) -> Task:
    return Task(
        "title",
        f"Write a short title (at most {TITLE_LIMIT} characters, no quotes, no trailing period) "
        "for a coding agent whose first instruction is below. Answer as JSON "
        '{"title": "..."}.\n\n<instruction>\n' + _context(first_prompt) + "\n</instruction>",
        _schema("title"),
    )


def branch_task(description: str) -> Task:
    return Task(
        "branch",
        "Name a new git branch for the work described below: lowercase words joined by "
        f"hyphens, at most {BRANCH_LIMIT} characters, optionally one prefix such as feat/ or "
        'fix/. Answer as JSON {"branch": "..."}.\n\n<work>\n' + _context(description) + "\n</work>",
        _schema("branch"),
    )


def commit_task(diff: str) -> Task:
    return Task(
        "commit",
        f"Write the commit message for the staged change below: a subject of at most "
        f"{SUBJECT_LIMIT} characters in the imperative mood, and a body (may be empty) saying "
        'why. Answer as JSON {"subject": "...", "body": "..."}.\n\n<diff>\n'
        + _context(diff)
        + "\n</diff>",
        _schema("subject", "body"),
    )


def change_request_task(diff: str, commits: str) -> Task:
    return Task(
        "change-request",
        "Write the title and the description (Markdown) of a pull request for the change "
        'below. Answer as JSON {"title": "...", "body": "..."}.\n\n<commits>\n'
        + _context(commits)
        + "\n</commits>\n<diff>\n"
        + _context(diff)
        + "\n</diff>",
        _schema("title", "body"),
    )


# ------------------------------------------------------------------------------ answers

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def parse_answer(reply: str | None, schema: dict[str, Any]) -> dict[str, str] | None:
    """The answer's required string fields, or ``None`` when the reply is not such a JSON
    object (code fences around it are tolerated)."""
    if not reply:
        return None
    text = _FENCE.sub("", reply.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    fields: dict[str, str] = {}
    for name in schema["required"]:
        field = value.get(name)
        if not isinstance(field, str):
            return None
        fields[name] = field
    return fields


def _one_line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def clean_title(answer: dict[str, str]) -> str | None:
    title = _one_line(answer["title"], TITLE_LIMIT).strip("\"'` ").rstrip(".")
    return title or None


def clean_branch(answer: dict[str, str]) -> str | None:
    """A branch name Git accepts, or ``None``: lowercase, runs of other characters become ``-``,
    at most one ``prefix/``."""
    raw = answer["branch"].strip().lower()
    prefix, _, rest = raw.rpartition("/")
    parts = [re.sub(r"[^a-z0-9]+", "-", part).strip("-") for part in (prefix, rest)]
    name = "/".join(part for part in parts if part)[:BRANCH_LIMIT].strip("-/")
    if not name or branch_name_problem(name) is not None:
        return None
    return name


def clean_commit(answer: dict[str, str]) -> tuple[str, str] | None:
    subject = _one_line(answer["subject"], SUBJECT_LIMIT)
    return (subject, answer["body"].strip()) if subject else None


def clean_change_request(answer: dict[str, str]) -> tuple[str, str] | None:
    title = _one_line(answer["title"], 120)
    return (title, answer["body"].strip()) if title else None
