"""GitHub through the ``gh`` program: pull request create/status/timeline and issue/PR search.

``gh`` is used only when it is installed (on ``PATH``) and signed in (``gh auth status``);
otherwise every call raises :class:`~paseo.git.problems.GitHubUnavailable` naming what is
missing and how to get it. Its processes go through the daemon's Git limiter too (``gh``
starts git itself), as argvs in the caller's directory, never prompting.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from paseo.git.limiter import GitProcessLimiter
from paseo.git.problems import GitHubUnavailable
from paseo.git.runner import GitCommandFailed, GitRunner

AUTH_CACHE_SECONDS = 60.0
"""How long a ``gh auth status`` answer is reused (the app asks on every panel refresh)."""
TIMEOUT = 60.0
_ENV = {"GH_PROMPT_DISABLED": "1", "NO_COLOR": "1", "GH_NO_UPDATE_NOTIFIER": "1"}
_PR_FIELDS = (
    "number,url,title,state,baseRefName,headRefName,isDraft,mergedAt,reviewDecision,"
    "statusCheckRollup"
)


@dataclass
class PullRequest:
    number: int
    url: str
    title: str
    state: str
    base: str
    head: str
    merged: bool
    draft: bool
    review_decision: str | None
    checks: list[dict[str, Any]] = field(default_factory=list)
    checks_status: str = "none"
    owner: str | None = None
    repo: str | None = None


class GitHub:
    """``gh`` behind the limiter; :meth:`require` says whether it can be used."""

    def __init__(self, limiter: GitProcessLimiter, *, program: str = "gh") -> None:
        self.limiter = limiter
        self.program = program
        self._auth: tuple[float, str | None] | None = None

    def _runner(self) -> GitRunner:
        path = shutil.which(self.program)
        if path is None:
            raise GitHubUnavailable(
                "GitHub features need the GitHub CLI `gh`, which is not installed on the "
                "daemon's machine: install it (https://cli.github.com), then sign in with "
                "`gh auth login`",
                data={"missing": "gh"},
            )
        return GitRunner(self.limiter, git=path)

    async def require(self, cwd: str) -> GitRunner:
        """A runner for ``gh``, or :class:`GitHubUnavailable` (not installed / not signed in)."""
        runner = self._runner()
        now = time.monotonic()
        if self._auth is None or now - self._auth[0] > AUTH_CACHE_SECONDS:
            result = await runner.run(
                ["auth", "status"], cwd=cwd, env=_ENV, check=False, timeout=TIMEOUT
            )
            problem = None if result.ok else (result.stderr.strip() or "not signed in")
            self._auth = (now, problem)
        problem = self._auth[1]
        if problem is not None:
            raise GitHubUnavailable(
                f"the GitHub CLI `gh` is not signed in: run `gh auth login` as the daemon's "
                f"user (gh says: {problem.splitlines()[0]})",
                data={"missing": "auth"},
            )
        return runner

    async def available(self, cwd: str) -> bool:
        try:
            await self.require(cwd)
        except GitHubUnavailable:
            return False
        return True

    async def _json(self, cwd: str, args: list[str]) -> Any:
        runner = await self.require(cwd)
        try:
            result = await runner.run(args, cwd=cwd, env=_ENV, timeout=TIMEOUT)
        except GitCommandFailed as exc:
            raise GitCommandFailed(exc.message.replace("git ", "gh ", 1), data=exc.data) from None
        return json.loads(result.stdout or "null")

    async def pr_status(self, cwd: str) -> PullRequest | None:
        """The pull request of the checked-out branch, or ``None`` when it has none."""
        runner = await self.require(cwd)
        result = await runner.run(
            ["pr", "view", "--json", _PR_FIELDS], cwd=cwd, env=_ENV, check=False, timeout=TIMEOUT
        )
        if not result.ok:
            if "no pull requests found" in result.stderr.lower():
                return None
            raise GitCommandFailed(
                f"gh pr view failed: {result.stderr.strip()}", data={"stderr": result.stderr}
            )
        return pull_request(json.loads(result.stdout))

    async def pr_create(
        self, cwd: str, *, title: str, body: str, base: str | None, head: str
    ) -> tuple[str, int | None]:
        """Open a pull request of ``head``; its URL and number."""
        runner = await self.require(cwd)
        args = ["pr", "create", "--title", title, "--body", body, "--head", head]
        if base:
            args += ["--base", base]
        try:
            result = await runner.run(args, cwd=cwd, env=_ENV, timeout=TIMEOUT)
        except GitCommandFailed as exc:
            raise GitCommandFailed(exc.message.replace("git ", "gh ", 1), data=exc.data) from None
        url = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        match = re.search(r"/pull/(\d+)", url)
        return url, int(match[1]) if match else None

    async def pr_timeline(
        self, cwd: str, *, number: int, owner: str, repo: str
    ) -> list[dict[str, Any]]:
        """Reviews and comments of a pull request, oldest first (the app's timeline items)."""
        data = await self._json(
            cwd,
            ["pr", "view", str(number), "--repo", f"{owner}/{repo}", "--json", "comments,reviews"],
        )
        return timeline_items(data or {})

    async def search(
        self, cwd: str, *, query: str, limit: int, kinds: list[str]
    ) -> list[dict[str, Any]]:
        """Issues and pull requests of the checkout's repository matching ``query``."""
        items: list[dict[str, Any]] = []
        common = ["--search", query, "--limit", str(limit), "--state", "all"]
        if "github-issue" in kinds:
            found = await self._json(
                cwd,
                [
                    "issue",
                    "list",
                    *common,
                    "--json",
                    "number,title,url,state,body,labels,updatedAt",
                ],
            )
            items += [search_item(raw, "issue") for raw in found or []]
        if "github-pr" in kinds:
            found = await self._json(
                cwd,
                [
                    "pr",
                    "list",
                    *common,
                    "--json",
                    "number,title,url,state,body,labels,updatedAt,baseRefName,headRefName",
                ],
            )
            items += [search_item(raw, "pr") for raw in found or []]
        items.sort(key=lambda item: str(item.get("updatedAt") or ""), reverse=True)
        return items[:limit]


def _check(raw: dict[str, Any]) -> dict[str, Any]:
    conclusion = str(raw.get("conclusion") or raw.get("state") or "").lower()
    status = str(raw.get("status") or "").lower()
    if status and status != "completed":
        state = "pending"
    elif conclusion in ("success", "neutral"):
        state = "success"
    elif conclusion in ("skipped",):
        state = "skipped"
    elif conclusion in ("cancelled", "canceled"):
        state = "cancelled"
    elif conclusion in ("pending", "expected", "queued", "in_progress", ""):
        state = "pending"
    else:
        state = "failure"
    return {
        "name": str(raw.get("name") or raw.get("context") or "check"),
        "status": state,
        "url": raw.get("detailsUrl") or raw.get("targetUrl"),
        "workflow": raw.get("workflowName") or None,
    }


def pull_request(raw: dict[str, Any]) -> PullRequest:
    """``gh pr view --json …`` as a :class:`PullRequest`."""
    checks = [_check(c) for c in raw.get("statusCheckRollup") or [] if isinstance(c, dict)]
    states = {c["status"] for c in checks}
    overall = (
        "none"
        if not checks
        else "failure"
        if "failure" in states
        else "pending"
        if "pending" in states
        else "success"
    )
    url = str(raw.get("url") or "")
    match = re.match(r"https?://[^/]+/([^/]+)/([^/]+)/pull/", url)
    decision = raw.get("reviewDecision") or None
    return PullRequest(
        number=int(raw.get("number") or 0),
        url=url,
        title=str(raw.get("title") or ""),
        state=str(raw.get("state") or "").lower(),
        base=str(raw.get("baseRefName") or ""),
        head=str(raw.get("headRefName") or ""),
        merged=bool(raw.get("mergedAt")) or str(raw.get("state")).upper() == "MERGED",
        draft=bool(raw.get("isDraft")),
        review_decision=str(decision).lower() if decision else None,
        checks=checks,
        checks_status=overall,
        owner=match[1] if match else None,
        repo=match[2] if match else None,
    )


def _millis(stamp: Any) -> int:
    try:
        return int(datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return 0


def timeline_items(data: dict[str, Any]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for review in data.get("reviews") or []:
        state = str(review.get("state") or "").lower()
        items.append(
            {
                "id": str(review.get("id") or ""),
                "kind": "review",
                "author": str((review.get("author") or {}).get("login") or "unknown"),
                "body": str(review.get("body") or ""),
                "createdAt": _millis(review.get("submittedAt")),
                "url": str(review.get("url") or ""),
                "reviewState": state if state in ("approved", "changes_requested") else "commented",
            }
        )
    for comment in data.get("comments") or []:
        items.append(
            {
                "id": str(comment.get("id") or ""),
                "kind": "comment",
                "author": str((comment.get("author") or {}).get("login") or "unknown"),
                "body": str(comment.get("body") or ""),
                "createdAt": _millis(comment.get("createdAt")),
                "url": str(comment.get("url") or ""),
            }
        )
    items.sort(key=lambda item: int(item["createdAt"]))
    return items


def search_item(raw: dict[str, Any], kind: str) -> dict[str, Any]:
    item: dict[str, Any] = {
        "kind": kind,
        "number": int(raw.get("number") or 0),
        "title": str(raw.get("title") or ""),
        "url": str(raw.get("url") or ""),
        "state": str(raw.get("state") or "").lower(),
        "body": raw.get("body"),
        "labels": [
            str(label.get("name")) for label in raw.get("labels") or [] if isinstance(label, dict)
        ],
        "updatedAt": raw.get("updatedAt"),
    }
    if kind == "pr":
        item["baseRefName"] = raw.get("baseRefName")
        item["headRefName"] = raw.get("headRefName")
    return item
