"""``paseo git status|diff|commit|push|pull|switch|merge|stash|branches``: the checkout of a
workspace directory (the current one, or ``--cwd``) through the daemon's ``git.*`` methods, so
every git process runs under the daemon's limiter and the same path rules as the app's."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from paseo.cli.errors import CliError

STASH_COLUMNS = [
    ("index", "INDEX"),
    ("branch", "BRANCH"),
    ("isPaseo", "PASEO"),
    ("message", "MESSAGE"),
]
BRANCH_COLUMNS = [("name", "BRANCH"), ("hasLocal", "LOCAL"), ("hasRemote", "ORIGIN")]
_MARK = {"add": "+", "remove": "-", "context": " "}


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cwd", default=None, help="a directory in the checkout (default: .)")
    parser.add_argument("--host", help="daemon address (default: this home's daemon)")


def configure(parser: argparse.ArgumentParser) -> None:
    subs = parser.add_subparsers(dest="subcommand", metavar="SUBCOMMAND")
    status = subs.add_parser("status", help="branch, upstream, ahead/behind and changed files")
    status.set_defaults(run=run_status)

    diff = subs.add_parser("diff", help="the changes, per file (bounded: big files are marked)")
    scope = diff.add_mutually_exclusive_group()
    scope.add_argument("--staged", action="store_true", help="only what is staged")
    scope.add_argument("--unstaged", action="store_true", help="only what is not staged")
    scope.add_argument("--base", metavar="REF", help="against the merge base with REF")
    diff.add_argument("-w", "--ignore-whitespace", action="store_true")
    diff.set_defaults(run=run_diff)

    commit = subs.add_parser("commit", help="commit every change (or only the staged ones)")
    commit.add_argument("-m", "--message", required=True)
    commit.add_argument("--staged", action="store_true", help="commit only what is staged")
    commit.set_defaults(run=run_commit)

    push = subs.add_parser("push", help="push the branch to its upstream")
    push.add_argument(
        "-u", "--set-upstream", action="store_true", help="without an upstream: origin/<branch>"
    )
    push.set_defaults(run=run_push)

    pull = subs.add_parser("pull", help="pull the branch's upstream")
    pull.set_defaults(run=run_pull)

    switch = subs.add_parser("switch", help="switch to a local branch or one of origin's")
    switch.add_argument("branch", metavar="BRANCH")
    switch.set_defaults(run=run_switch)

    merge = subs.add_parser("merge", help="merge the branch into its base (--from-base: back)")
    merge.add_argument("--base", metavar="REF", help="the base (default: the default branch)")
    merge.add_argument("--from-base", action="store_true", help="merge the base into the branch")
    merge.add_argument("--squash", action="store_true", help="squash into one commit on the base")
    merge.set_defaults(run=run_merge)

    branches = subs.add_parser("branches", help="branches matching a query, newest first")
    branches.add_argument("query", nargs="?", default="")
    branches.add_argument("--limit", type=int, default=50)
    branches.set_defaults(run=run_branches)

    stash = subs.add_parser("stash", help="save, pop or list stashes")
    stash_subs = stash.add_subparsers(dest="stash_command", metavar="ACTION")
    save = stash_subs.add_parser("save", help="stash every change, untracked files included")
    save.add_argument("label", nargs="?", help="a name to find it by (default: the branch)")
    save.set_defaults(run=run_stash_save)
    pop = stash_subs.add_parser("pop", help="apply a stash and drop it")
    pop.add_argument("index", type=int, nargs="?", default=0)
    pop.set_defaults(run=run_stash_pop)
    ls = stash_subs.add_parser("list", help="the stashes (--paseo: only Paseo's)")
    ls.add_argument("--paseo", action="store_true")
    ls.set_defaults(run=run_stash_list)
    stash.set_defaults(run=run_stash_list, paseo=False)

    for sub in (status, diff, commit, push, pull, switch, merge, branches, stash, save, pop, ls):
        _common(sub)
    parser.set_defaults(run=_usage(parser))


def _usage(parser: argparse.ArgumentParser) -> Any:
    def run(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return run


def _call(args: argparse.Namespace, method: str, **params: Any) -> Any:
    from paseo.cli.commands.project import absolute, call_daemon

    cwd = absolute(args.cwd or ".")
    return call_daemon(args, method, {"cwd": cwd, **params})


def _json(args: argparse.Namespace) -> bool:
    return getattr(args, "output", "table") != "table"


def _emit_raw(args: argparse.Namespace, result: Any) -> None:
    from paseo.cli.output import emit

    emit(args, result)


def run_status(args: argparse.Namespace) -> int:
    result = _call(args, "git.status")
    if _json(args):
        _emit_raw(args, result)
        return 0
    out = sys.stdout
    branch = result["branch"] or f"(detached at {str(result['headOid'] or '')[:8]})"
    line = f"On branch {branch}"
    if result["upstream"]:
        line += f", tracking {result['upstream']}"
        ahead, behind = result["ahead"] or 0, result["behind"] or 0
        if ahead or behind:
            line += f" (ahead {ahead}, behind {behind})"
        else:
            line += " (up to date)"
    else:
        line += " (no upstream: `paseo git push --set-upstream` sets one)"
    out.write(line + "\n")
    base = result.get("base")
    if base:
        out.write(f"Against {base['ref']}: ahead {base['ahead']}, behind {base['behind']}\n")
    if not result["files"]:
        out.write("Nothing to commit, working tree clean\n")
    for change in result["files"]:
        moved = f" (from {change['origPath']})" if change.get("origPath") else ""
        staged = change["index"] not in ("unchanged", "untracked", "conflicted")
        unstaged = change["worktree"] not in ("unchanged", "untracked", "conflicted")
        where = " (partly staged)" if staged and unstaged else " (staged)" if staged else ""
        tag = change["state"] + where
        out.write(f"  {tag:<22} {change['path']}{moved}\n")
    if result["truncated"]:
        out.write("  … more files changed than are listed\n")
    return 0


def run_diff(args: argparse.Namespace) -> int:
    scope = "staged" if args.staged else "unstaged" if args.unstaged else "uncommitted"
    params: dict[str, Any] = {"scope": "base" if args.base else scope}
    if args.base:
        params["baseRef"] = args.base
    if args.ignore_whitespace:
        params["ignoreWhitespace"] = True
    result = _call(args, "git.diff", **params)
    if _json(args):
        _emit_raw(args, result)
        return 0
    out = sys.stdout
    for change in result["files"]:
        old = change.get("oldPath") or change["path"]
        out.write(f"--- {'/dev/null' if change['isNew'] else 'a/' + old}\n")
        out.write(f"+++ {'/dev/null' if change['isDeleted'] else 'b/' + change['path']}\n")
        if change["status"] != "ok":
            what = "binary file" if change["status"] == "binary" else "too large to show"
            out.write(
                f"# {change['path']}: {what} (+{change['additions']} -{change['deletions']})\n"
            )
            continue
        for hunk in change["hunks"]:
            for line in hunk["lines"]:
                if line["type"] == "header":
                    out.write(line["content"] + "\n")
                else:
                    out.write(_MARK[line["type"]] + line["content"] + "\n")
    if not result["files"]:
        sys.stderr.write("no changes\n")
    if result["truncated"]:
        sys.stderr.write("the diff was cut at its size bounds: some files are not shown\n")
    return 0


def run_commit(args: argparse.Namespace) -> int:
    result = _call(args, "git.commit", message=args.message, all=not args.staged)
    if _json(args):
        _emit_raw(args, result)
    else:
        sys.stdout.write(f"[{result['commit'][:8]}] {result['summary']}\n")
    return 0


def run_push(args: argparse.Namespace) -> int:
    result = _call(args, "git.push", setUpstream=args.set_upstream)
    if _json(args):
        _emit_raw(args, result)
    else:
        sys.stdout.write(f"pushed to {result['upstream']}\n")
    return 0


def run_pull(args: argparse.Namespace) -> int:
    result = _call(args, "git.pull")
    if _json(args):
        _emit_raw(args, result)
    else:
        sys.stdout.write("pulled\n")
    return 0


def run_switch(args: argparse.Namespace) -> int:
    result = _call(args, "git.switch", branch=args.branch)
    if _json(args):
        _emit_raw(args, result)
    else:
        origin = " (new, tracking origin)" if result["source"] == "remote" else ""
        sys.stdout.write(f"switched to {result['branch']}{origin}\n")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    if args.from_base:
        if args.squash:
            raise CliError("--squash merges into the base; it does not go with --from-base")
        params = {"baseRef": args.base} if args.base else {}
        result = _call(args, "git.mergeFromBase", **params)
        text = f"merged {result['baseRef']} into the branch\n"
    else:
        params = {"strategy": "squash" if args.squash else "merge"}
        if args.base:
            params["baseRef"] = args.base
        result = _call(args, "git.merge", **params)
        text = f"merged into the base in {result['mergedIn']}\n"
    if _json(args):
        _emit_raw(args, result)
    else:
        sys.stdout.write(text)
    return 0


def run_branches(args: argparse.Namespace) -> int:
    from paseo.cli.output import emit

    result = _call(args, "git.branch.suggest", query=args.query, limit=args.limit)
    emit(args, result if _json(args) else result["branches"], columns=BRANCH_COLUMNS, id_key="name")
    return 0


def run_stash_save(args: argparse.Namespace) -> int:
    params = {"label": args.label} if args.label else {}
    result = _call(args, "git.stash.save", **params)
    if _json(args):
        _emit_raw(args, result)
    else:
        sys.stdout.write("stashed (`paseo git stash pop` brings it back)\n")
    return 0


def run_stash_pop(args: argparse.Namespace) -> int:
    result = _call(args, "git.stash.pop", index=args.index)
    if _json(args):
        _emit_raw(args, result)
    else:
        sys.stdout.write(f"applied and dropped stash {args.index}\n")
    return 0


def run_stash_list(args: argparse.Namespace) -> int:
    from paseo.cli.output import emit

    result = _call(args, "git.stash.list", paseoOnly=bool(getattr(args, "paseo", False)))
    if _json(args):
        emit(args, result)
    elif result["entries"]:
        emit(args, result["entries"], columns=STASH_COLUMNS, id_key="index")
    else:
        sys.stdout.write("no stashes\n")
    return 0
