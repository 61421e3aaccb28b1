"""The checkpoint plumbing and service against real git repositories in a temporary directory.

The agent port is a small stand-in (records and a subscription); what is under test — the
snapshots, refs, diffs, undo and redo — runs the real git CLI. After every operation the user's
HEAD, index, stash, branches and config are compared with what they were.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from paseo_hookspecs.errors import Conflict, NotFound
from paseo_hookspecs.records import AgentRecord

from paseo.checkpoints.plumbing import REF_ROOT, Repo, parse_raw
from paseo.checkpoints.service import CheckpointService
from paseo.git.limiter import GitProcessLimiter
from paseo.git.runner import GitRunner

T = TypeVar("T")
AGENT = "agt_checkpointtest"


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(asyncio.wait_for(coro, 60))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True, timeout=30
    ).stdout


def user_state(repo: Path) -> dict[str, str]:
    """Everything of the user's that checkpoints must never change."""
    return {
        "HEAD": git(repo, "rev-parse", "HEAD"),
        "symbolic": git(repo, "symbolic-ref", "-q", "HEAD"),
        "index": git(repo, "ls-files", "-s"),
        "staged": git(repo, "diff", "--cached"),
        "branches": git(repo, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
        "stash": git(repo, "stash", "list"),
        "config": (repo / ".git" / "config").read_text(),
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "User")
    git(root, "config", "user.email", "user@example.invalid")
    (root / ".gitignore").write_text("build/\n")
    (root / "app.py").write_text("print('v1')\n")
    (root / "lib").mkdir()
    (root / "lib" / "util.py").write_text("X = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    # The user's own state: a stash, staged work, an untracked note, an ignored build output.
    (root / "app.py").write_text("print('stashed')\n")
    git(root, "stash", "-q")
    (root / "staged.txt").write_text("staged by the user\n")
    git(root, "add", "staged.txt")
    (root / "notes.md").write_text("my notes\n")
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_text("ignored\n")
    return root


class Agents:
    """The agent port, as far as the service uses it."""

    def __init__(self, cwd: Path) -> None:
        self.record = AgentRecord(
            id=AGENT,
            provider="claude",
            cwd=str(cwd),
            createdAt="2026-01-01T00:00:00Z",
            updatedAt="2026-01-01T00:00:00Z",
            lastStatus="idle",
        )

    async def get(self, agent: str) -> AgentRecord:
        if not AGENT.startswith(agent):
            raise NotFound(agent)
        return self.record

    def subscribe(self, observer: Any, *, name: str, **_: Any) -> Any:
        raise AssertionError("not started in these tests")


class Config:
    def __init__(self, keep: int = 100) -> None:
        self.keep = keep

    @property
    def resolved(self) -> Any:
        keep = self.keep

        class Agents:
            checkpointsPerAgent = keep

        class Resolved:
            agents = Agents

        return Resolved


def service(repo: Path, home: Path, keep: int = 100) -> tuple[CheckpointService, Agents]:
    agents = Agents(repo)
    runner = GitRunner(GitProcessLimiter())
    made = CheckpointService(
        runner=runner,
        agents=agents,  # type: ignore[arg-type]
        config=Config(keep),
        home=home,
        settle_timeout=0.2,
    )
    return made, agents


async def turn(svc: CheckpointService, write: dict[str, str | None], n: int) -> None:
    await svc.begin(AGENT, f"2026-01-01T00:0{n}:00Z")
    for path, text in write.items():
        target = Path(svc._agents.record.cwd) / path  # type: ignore[attr-defined]
        if text is None:
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    await svc.end(AGENT, f"2026-01-01T00:0{n}:30Z", "completed")


def test_parse_raw_reads_adds_deletes_and_modifications() -> None:
    raw = (
        ":000000 100644 " + "0" * 40 + " " + "a" * 40 + " A\0new file\0"
        ":100644 000000 " + "b" * 40 + " " + "0" * 40 + " D\0gone\0"
        ":100644 100755 " + "c" * 40 + " " + "d" * 40 + " M\0run.sh\0"
    )
    added, deleted, changed = parse_raw(raw)
    assert (added.path, added.old, added.new and added.new.oid) == ("new file", None, "a" * 40)
    assert (deleted.path, deleted.new) == ("gone", None)
    assert changed.old
    assert changed.new
    assert (changed.old.mode, changed.new.mode) == (
        "100644",
        "100755",
    )


def test_snapshot_holds_untracked_respects_gitignore_and_touches_nothing(
    repo: Path, tmp_path: Path
) -> None:
    before = user_state(repo)
    runner = GitRunner(GitProcessLimiter())

    async def body() -> str:
        found = await Repo.find(runner, repo / "lib")
        assert found is not None
        assert found.toplevel == repo
        return await found.snapshot(tmp_path / "cache" / "index", None)

    tree = run(body())
    files = git(repo, "ls-tree", "-r", "--name-only", tree).split()
    assert sorted(files) == [".gitignore", "app.py", "lib/util.py", "notes.md", "staged.txt"]
    assert user_state(repo) == before
    assert not (repo / ".git" / "index.lock").exists()


def test_a_directory_outside_any_repository_costs_no_git_process(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every turn of an agent asks for its cwd's working tree: outside one, a few stats answer
    # (no fork of the daemon per turn); inside one, or when GIT_DIR points elsewhere, git does.
    if any((folder / ".git").exists() for folder in tmp_path.parents):
        pytest.skip("the temporary directory is inside a repository here")
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    plain = tmp_path / "plain" / "deep"
    plain.mkdir(parents=True)
    runner = GitRunner(GitProcessLimiter())

    async def body() -> None:
        assert await Repo.find(runner, plain) is None
        assert await Repo.find(runner, tmp_path / "missing") is None
        assert runner.processes_started == 0
        found = await Repo.find(runner, repo / "lib")
        assert found is not None
        assert found.toplevel == repo
        assert runner.processes_started == 1
        # A repository made later in the same directory is found at the next turn.
        git(tmp_path / "plain", "init", "-q")
        found = await Repo.find(runner, plain)
        assert found is not None
        assert found.toplevel == tmp_path / "plain"
        monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        started = runner.processes_started
        await Repo.find(runner, elsewhere)
        assert runner.processes_started == started + 1

    run(body())


def test_outside_a_git_tree_is_said(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    svc, _ = service(plain, tmp_path / "home")
    history = run(svc.history(AGENT))
    assert history.repo is None
    assert history.reason
    assert "not inside a git working tree" in history.reason


def test_two_turns_diff_undo_redo(repo: Path, tmp_path: Path) -> None:
    before = user_state(repo)
    svc, agents = service(repo, tmp_path / "home")

    async def body() -> None:
        await turn(svc, {"app.py": "print('turn 1')\n", "new.txt": "from turn 1\n"}, 1)
        await turn(svc, {"lib/util.py": "X = 2\n", "lib/deep/added.py": "Y = 1\n"}, 2)
        history = await svc.history(AGENT)
        assert [(t.number, t.filesChanged, t.outcome) for t in history.turns] == [
            (1, 2, "completed"),
            (2, 2, "completed"),
        ]
        _, [(one, patch)] = await svc.diff(AGENT, 1)
        assert one == 1
        assert "+print('turn 1')" in patch
        assert "+from turn 1" in patch
        assert "util.py" not in patch
        assert "notes.md" not in patch
        _, every = await svc.diff(AGENT, None)
        assert [n for n, _ in every] == [1, 2]

        undone = await svc.undo(AGENT, 2)
        assert sorted(undone.restored) == ["lib/deep/added.py", "lib/util.py"]
        assert (repo / "lib" / "util.py").read_text() == "X = 1\n"
        assert not (repo / "lib" / "deep").exists()
        undone = await svc.undo(AGENT, 1)
        assert sorted(undone.restored) == ["app.py", "new.txt"]
        assert (repo / "app.py").read_text() == "print('v1')\n"
        assert not (repo / "new.txt").exists()

        redone = await svc.redo(AGENT)
        assert (redone.turn, sorted(redone.restored)) == (1, ["app.py", "new.txt"])
        assert (repo / "app.py").read_text() == "print('turn 1')\n"
        assert (repo / "new.txt").read_text() == "from turn 1\n"
        assert (repo / "lib" / "util.py").read_text() == "X = 1\n"  # turn 2 stays undone
        assert [u.turn for u in (await svc.history(AGENT)).undos] == [2]
        agents.record = agents.record.model_copy(update={"lastStatus": "running"})
        with pytest.raises(Conflict, match="running"):
            await svc.undo(AGENT, 1)
        with pytest.raises(Conflict, match="running"):
            await svc.redo(AGENT)

    run(body())
    assert (repo / "notes.md").read_text() == "my notes\n"
    assert (repo / "staged.txt").read_text() == "staged by the user\n"
    assert (repo / "build" / "out.bin").read_text() == "ignored\n"
    assert user_state(repo) == before


def test_a_file_changed_since_is_a_conflict_and_left_alone(repo: Path, tmp_path: Path) -> None:
    svc, _ = service(repo, tmp_path / "home")

    async def body() -> None:
        await turn(svc, {"app.py": "print('agent')\n", "other.txt": "agent\n"}, 1)
        (repo / "app.py").write_text("print('the user edited it after')\n")
        report = await svc.undo(AGENT, 1)
        assert report.conflicts == ["app.py"]
        assert report.restored == ["other.txt"]
        again = await svc.undo(AGENT, 1)
        assert (again.restored, again.unchanged, again.conflicts) == ([], ["other.txt"], ["app.py"])

    run(body())
    assert (repo / "app.py").read_text() == "print('the user edited it after')\n"
    assert not (repo / "other.txt").exists()


def test_pruned_by_count_and_with_the_agent(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    svc, _ = service(repo, home, keep=2)

    async def body() -> None:
        for n in range(1, 5):
            await turn(svc, {"counter.txt": f"{n}\n"}, n)
        assert [t.number for t in (await svc.history(AGENT)).turns] == [3, 4]
        with pytest.raises(NotFound, match="turn 1"):
            await svc.undo(AGENT, 1)
        await svc.purge(AGENT)

    run(body())
    assert git(repo, "for-each-ref", REF_ROOT) == ""
    assert not (home / "checkpoints" / AGENT).exists()


def test_the_index_cache_makes_the_next_snapshot_hash_only_changes(
    repo: Path, tmp_path: Path
) -> None:
    """A second snapshot with nothing changed gives the same tree from the cached index."""
    runner = GitRunner(GitProcessLimiter())
    cache = tmp_path / "cache" / "index"

    async def body() -> tuple[str, str, str]:
        found = Repo(runner, repo)
        first = await found.snapshot(cache, None)
        second = await found.snapshot(cache, first)
        (repo / "notes.md").write_text("changed\n")
        third = await found.snapshot(cache, second)
        return first, second, third

    first, second, third = run(body())
    assert first == second != third
    assert cache.exists()
    assert [p.name for p in cache.parent.iterdir()] == ["index"]  # no temporary left


def test_a_turn_whose_end_never_came_does_not_block_undo_for_good(
    repo: Path, tmp_path: Path
) -> None:
    """An end event lost (the subscriber fell behind) leaves the turn without an after
    checkpoint; once the agent is idle, undo says so instead of calling it running forever."""
    svc, _ = service(repo, tmp_path / "home")

    async def body() -> None:
        await turn(svc, {"a.txt": "one\n"}, 1)
        await svc.begin(AGENT, "2026-01-01T00:05:00Z")  # turn 2's end is never delivered
        with pytest.raises(Conflict, match=r"turn 2 .* has not ended"):
            await svc.undo(AGENT, None)
        history = await svc.history(AGENT)
        assert [(t.number, t.after is not None) for t in history.turns] == [(1, True), (2, False)]
        assert (await svc.undo(AGENT, 1)).restored == ["a.txt"]

    run(body())
