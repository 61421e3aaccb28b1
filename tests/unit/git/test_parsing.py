"""Parsing git's output: porcelain v2 status, unified diffs, numstat, stash lists, refs and
``gh``'s JSON (captured text, so each format's corners are pinned down)."""

from __future__ import annotations

from paseo.git.branches import parse_refs
from paseo.git.diffparse import parse_numstat, parse_patch, text_file_diff, unquote
from paseo.git.github import pull_request, search_item, timeline_items
from paseo.git.porcelain import parse_status
from paseo.git.stash import parse_stash_list

OID = "a" * 40


def test_status_branch_headers_and_every_record_kind() -> None:
    output = "\0".join(
        [
            f"# branch.oid {OID}",
            "# branch.head feature/x",
            "# branch.upstream origin/feature/x",
            "# branch.ab +3 -1",
            f"1 .M N... 100644 100644 100644 {OID} {OID} src/file name.py",
            f"1 A. N... 000000 100644 100644 {'0' * 40} {OID} added.txt",
            f"2 R. N... 100644 100644 100644 {OID} {OID} R100 new/path.txt",
            "old/path.txt",
            f"u UU N... 100644 100644 100644 100644 {OID} {OID} {OID} both.txt",
            "? untracked dir/f.txt",
            "",
        ]
    )
    report = parse_status(output)
    assert (report.head_oid, report.branch) == (OID, "feature/x")
    assert (report.upstream, report.ahead, report.behind) == ("origin/feature/x", 3, 1)
    got = [(f.path, f.orig_path, f.index, f.worktree, f.state) for f in report.files]
    assert got == [
        ("src/file name.py", None, "unchanged", "modified", "modified"),
        ("added.txt", None, "added", "unchanged", "added"),
        ("new/path.txt", "old/path.txt", "renamed", "unchanged", "renamed"),
        ("both.txt", None, "conflicted", "conflicted", "conflicted"),
        ("untracked dir/f.txt", None, "untracked", "untracked", "untracked"),
    ]
    assert report.conflicts == ["both.txt"]
    assert report.dirty


def test_status_before_the_first_commit_and_detached() -> None:
    unborn = parse_status("# branch.oid (initial)\0# branch.head main\0")
    assert (unborn.head_oid, unborn.branch, unborn.upstream, unborn.ahead) == (
        None,
        "main",
        None,
        None,
    )
    detached = parse_status(f"# branch.oid {OID}\0# branch.head (detached)\0")
    assert detached.branch is None
    assert not detached.dirty


PATCH = """\
diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -1,3 +1,3 @@ def context():
 one
-two
+TWO
 three
@@ -10 +10,2 @@
--- not a header, a removed line
+++ not a header either
+x
\\ No newline at end of file
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3333333..0000000
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
diff --git a/old name.txt b/new name.txt
similarity index 90%
rename from old name.txt
rename to new name.txt
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..4444444
Binary files /dev/null and b/img.png differ
diff --git "a/tab\\there" "b/tab\\there"
new file mode 100644
--- /dev/null
+++ "b/tab\\there"
@@ -0,0 +1 @@
+t
"""


def test_patch_files_hunks_and_lines() -> None:
    files = parse_patch(PATCH)
    assert [f.path for f in files] == ["a.txt", "gone.txt", "new name.txt", "img.png", "tab\there"]
    first = files[0]
    assert (first.additions, first.deletions, len(first.hunks)) == (3, 2, 2)
    hunk = first.hunks[0]
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 3, 1, 3)
    assert [(ln.type, ln.content) for ln in hunk.lines] == [
        ("header", "@@ -1,3 +1,3 @@"),
        ("context", "one"),
        ("remove", "two"),
        ("add", "TWO"),
        ("context", "three"),
    ]
    second = first.hunks[1]
    assert (second.old_count, second.new_count) == (1, 2)
    assert [ln.type for ln in second.lines[1:]] == ["remove", "add", "add"]
    assert files[1].is_deleted
    assert files[1].deletions == 1
    assert files[2].old_path == "old name.txt"
    assert files[2].hunks == []
    assert files[3].is_new
    assert files[3].status == "binary"
    assert files[4].is_new
    assert files[4].additions == 1


def test_numstat_plain_binary_and_renamed() -> None:
    output = "3\t1\ta.txt\0-\t-\timg.png\0" + "0\t0\t\0old.txt\0new.txt\0"
    stats = parse_numstat(output)
    assert [(s.path, s.old_path, s.additions, s.deletions, s.binary) for s in stats] == [
        ("a.txt", None, 3, 1, False),
        ("img.png", None, None, None, True),
        ("new.txt", "old.txt", 0, 0, False),
    ]


def test_unquote_undoes_git_c_quoting() -> None:
    assert unquote('"caf\\303\\251 \\"x\\""') == 'café "x"'
    assert unquote("plain") == "plain"


def test_untracked_text_binary_and_too_large() -> None:
    text = text_file_diff("n.txt", b"a\nb\n", max_lines=10)
    assert (text.additions, text.status) == (2, "ok")
    assert [ln.content for ln in text.hunks[0].lines] == ["@@ -0,0 +1,2 @@", "a", "b"]
    assert text_file_diff("b.bin", b"x\0y", max_lines=10).status == "binary"
    big = text_file_diff("big", b"x\n" * 11, max_lines=10)
    assert (big.status, big.hunks, big.additions) == ("too_large", [], 11)


def test_stash_list_marks_paseo_stashes_and_their_branch() -> None:
    output = (
        "stash@{0}\0On feature: paseo-auto-stash: feature\0"
        "stash@{1}\0WIP on main: 1234567 subject\0"
        "stash@{2}\0On main: paseo-auto-stash: unnamed\0"
    )
    entries = parse_stash_list(output)
    assert [(e.index, e.branch, e.is_paseo) for e in entries] == [
        (0, "feature", True),
        (1, "main", False),
        (2, None, True),
    ]


def test_refs_merge_local_and_origin_newest_first() -> None:
    output = (
        "refs/heads/main\x00100\n"
        "refs/remotes/origin/main\x00120\n"
        "refs/remotes/origin/HEAD\x00120\n"
        "refs/remotes/origin/only-remote\x00300\n"
        "refs/heads/only-local\x0050\n"
    )
    got = [(b.name, b.committer_date, b.has_local, b.has_remote) for b in parse_refs(output)]
    assert got == [
        ("only-remote", 300, False, True),
        ("main", 120, True, True),
        ("only-local", 50, True, False),
    ]


def test_gh_pull_request_checks_and_timeline() -> None:
    pr = pull_request(
        {
            "number": 7,
            "url": "https://github.com/o/r/pull/7",
            "title": "T",
            "state": "OPEN",
            "baseRefName": "main",
            "headRefName": "f",
            "isDraft": False,
            "mergedAt": None,
            "reviewDecision": "APPROVED",
            "statusCheckRollup": [
                {"name": "ci", "status": "COMPLETED", "conclusion": "SUCCESS", "detailsUrl": "u"},
                {"name": "lint", "status": "IN_PROGRESS", "conclusion": ""},
            ],
        }
    )
    assert (pr.owner, pr.repo, pr.state, pr.merged) == ("o", "r", "open", False)
    assert [c["status"] for c in pr.checks] == ["success", "pending"]
    assert (pr.checks_status, pr.review_decision) == ("pending", "approved")
    items = timeline_items(
        {
            "reviews": [
                {
                    "id": "r",
                    "author": {"login": "b"},
                    "state": "APPROVED",
                    "submittedAt": "2026-01-02T00:00:00Z",
                }
            ],
            "comments": [
                {
                    "id": "c",
                    "author": {"login": "a"},
                    "body": "hi",
                    "createdAt": "2026-01-01T00:00:00Z",
                }
            ],
        }
    )
    assert [(i["kind"], i["author"]) for i in items] == [("comment", "a"), ("review", "b")]
    assert items[1]["reviewState"] == "approved"
    issue = search_item({"number": 1, "labels": [{"name": "bug"}], "state": "OPEN"}, "issue")
    assert (issue["labels"], issue["state"], "headRefName" in issue) == (["bug"], "open", False)


def test_output_cut_at_a_byte_bound_loses_only_the_cut_record() -> None:
    from paseo.git.checkout import whole_records

    full = f"1 .M N... 100644 100644 100644 {OID} {OID} a.txt\0? b.txt\0"
    cut = full + "1 .M N... 100644 1006"
    assert [f.path for f in parse_status(whole_records(cut, True)).files] == ["a.txt", "b.txt"]
    assert [f.path for f in parse_status(cut).files] == ["a.txt", "b.txt"]
    numstat = "1\t2\ta.txt\0" + "0\t0\t\0old.txt\0"
    assert [s.path for s in parse_numstat(whole_records(numstat + "ne", True))] == ["a.txt"]
    assert [s.path for s in parse_numstat("1\t2\ta.txt\0" + "3\t")] == ["a.txt"]
