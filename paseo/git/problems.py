"""The errors of checkout operations, each saying what is wrong and what to do about it.

A failed git command is classified from its stderr (git answers in ``LC_ALL=C``, so the
English phrases below are stable) into the specific cases a user can act on; anything else
keeps git's own message, which already names the command that failed.
"""

from __future__ import annotations

from paseo_hookspecs.errors import Conflict, InvalidParams, PaseoError, Unavailable

from paseo.git.runner import GitCommandFailed


class NotAGitCheckout(InvalidParams):
    """The directory is in no git checkout."""

    code = "not_git_repo"


class MergeConflict(Conflict):
    """A merge, pull or stash pop stopped on conflicting files."""

    code = "merge_conflict"


class NoUpstream(Conflict):
    """The branch tracks no remote branch (push/pull have nowhere to go)."""

    code = "no_upstream"


class NoRemote(Conflict):
    """The repository has no remote to push to or pull from."""

    code = "no_remote"


class DirtyCheckout(Conflict):
    """Uncommitted changes stand in the way (a switch, a merge that wants a clean tree)."""

    code = "dirty_checkout"


class NothingToCommit(Conflict):
    code = "nothing_to_commit"


class GitHubUnavailable(Unavailable):
    """``gh`` is not installed or not signed in; ``data.missing`` says which."""

    code = "github_unavailable"


class RemoteRejected(Conflict):
    """The remote refused a push (it has commits the branch lacks)."""

    code = "push_rejected"


def not_a_checkout(cwd: str) -> NotAGitCheckout:
    return NotAGitCheckout(
        f"{cwd} is not in a git checkout (run `git init` there to make it one)",
        data={"cwd": cwd},
    )


def conflict_message(what: str, files: list[str], *, cwd: str, abort: str | None) -> str:
    shown = ", ".join(files[:10]) + (f" and {len(files) - 10} more" if len(files) > 10 else "")
    where = f" in {shown}" if files else ""
    if abort is None:
        return f"{what} conflicted{where}; it was undone, the checkout is as it was"
    return (
        f"{what} conflicted{where}: resolve the files and commit, "
        f"or run `{abort}` in {cwd} to go back"
    )


def classify(exc: GitCommandFailed, *, cwd: str, branch: str | None = None) -> PaseoError:
    """A specific error for a failed git command, or ``exc`` itself."""
    stderr = str(exc.data.get("stderr") or "") if isinstance(exc.data, dict) else ""
    text = stderr or exc.message
    lowered = text.lower()
    if "not a git repository" in lowered:
        return not_a_checkout(cwd)
    if (
        "no upstream" in lowered
        or "has no upstream branch" in lowered
        or ("there is no tracking information" in lowered)
    ):
        name = branch or "<branch>"
        return NoUpstream(
            f"the branch {name!r} has no upstream: set it with "
            f"`git push --set-upstream origin {name}` (or `paseo git push --set-upstream`)",
            data={"branch": branch, "command": f"git push --set-upstream origin {name}"},
        )
    if "would be overwritten by" in lowered or "please commit your changes or stash" in lowered:
        return DirtyCheckout(
            "uncommitted changes would be overwritten: commit them, or stash them with "
            f"`paseo git stash save` (git says: {_first_line(text)})",
            data={"cwd": cwd},
        )
    if "[rejected]" in text or "failed to push some refs" in lowered:
        return RemoteRejected(
            "the remote has commits this branch does not: pull first (`paseo git pull`), "
            f"then push again (git says: {_first_line(text)})",
            data={"cwd": cwd},
        )
    if "need to specify how to reconcile divergent branches" in lowered:
        return Conflict(
            "the branch and its upstream have diverged: merge them with "
            "`git pull --no-rebase` or rebase with `git pull --rebase`",
            data={"cwd": cwd},
        )
    return exc


def _first_line(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped.removeprefix("error: ").removeprefix("fatal: ")
    return text.strip()
