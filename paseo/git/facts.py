"""Repository facts read in-process (dulwich and ``os.stat``), never by starting git.

Paths stay lexical: a checkout root is found by walking up from the given directory looking for
a ``.git`` entry, and nothing is ever realpathed, so a project opened through a symlink keeps the
path its user chose.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

HEADS = "refs/heads/"

_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*|/.*)$")


def normalize_path(path: str) -> str:
    """``path`` made absolute and normalized lexically (``abspath``; never ``realpath``)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(path)))


def find_checkout_root(path: str) -> str | None:
    """The nearest directory at or above ``path`` holding a ``.git`` entry (a directory for a
    main checkout, a file for a linked worktree), or ``None``."""
    current = normalize_path(path)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@dataclass(frozen=True)
class RepoFacts:
    """What a checkout says about itself."""

    toplevel: str
    """The checkout root (the directory holding ``.git``)."""
    git_dir: str
    common_dir: str
    branch: str | None
    """The checked-out branch (short name); ``None`` when HEAD is detached or unborn-invalid."""
    head_oid: str | None
    remote_url: str | None
    """``origin``'s URL, else the first remote's, else ``None``."""
    is_linked_worktree: bool
    main_repo_root: str
    """The main checkout (the common dir's parent; the common dir itself for a bare repo)."""

    @property
    def watch_files(self) -> tuple[str, ...]:
        """Files whose stat changes whenever these facts may change."""
        return (
            os.path.join(self.toplevel, ".git"),
            os.path.join(self.git_dir, "HEAD"),
            os.path.join(self.common_dir, "config"),
        )


def open_repo(path: str) -> Any:
    """A dulwich ``Repo`` for the checkout containing ``path``, or ``None``. Typed ``Any``:
    dulwich's own annotations distinguish object-id flavours this module does not need."""
    root = find_checkout_root(path)
    if root is None:
        return None
    # Imported here: dulwich costs ~30 ms to import and the daemon only needs it once a
    # repository is actually read, not to start.
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    try:
        return Repo(root)
    except (NotGitRepository, OSError, ValueError):
        return None


def read_facts(path: str) -> RepoFacts | None:
    """The facts of the checkout containing ``path``, or ``None`` when it is not in one."""
    root = find_checkout_root(path)
    if root is None:
        return None
    repo = open_repo(root)
    if repo is None:
        return None
    try:
        git_dir = normalize_path(os.path.join(root, repo.controldir()))
        common_dir = normalize_path(os.path.join(root, repo.commondir()))
        branch: str | None = None
        head = _read_head(git_dir)
        if head.startswith("ref: "):
            ref = head[5:].strip()
            if ref.startswith(HEADS):
                branch = ref[len(HEADS) :]
        head_oid = _ref_oid(repo, b"HEAD")
        remote_url = _remote_url(repo)
    finally:
        repo.close()
    main_root = (
        os.path.dirname(common_dir) if os.path.basename(common_dir) == ".git" else common_dir
    )
    return RepoFacts(
        toplevel=root,
        git_dir=git_dir,
        common_dir=common_dir,
        branch=branch,
        head_oid=head_oid,
        remote_url=remote_url,
        is_linked_worktree=git_dir != common_dir,
        main_repo_root=main_root,
    )


def _read_head(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def _ref_oid(repo: Any, ref: bytes) -> str | None:
    try:
        value = repo.refs[ref]
    except (KeyError, ValueError, OSError):
        return None
    return value.decode("ascii") if isinstance(value, bytes) else None


def _remote_url(repo: Any) -> str | None:
    config = repo.get_config()
    names: list[bytes] = []
    for section in config.sections():
        if len(section) == 2 and section[0] == b"remote":
            names.append(section[1])
    ordered = sorted(names, key=lambda name: (name != b"origin", names.index(name)))
    for name in ordered:
        try:
            url = config.get((b"remote", name), b"url")
        except KeyError:
            continue
        if url:
            return url.decode("utf-8", "replace") if isinstance(url, bytes) else str(url)
    return None


def ref_oid(path: str, ref: str) -> str | None:
    """The object id ``ref`` (``refs/heads/x``, ``HEAD``…) names in the checkout at ``path``."""
    repo = open_repo(path)
    if repo is None:
        return None
    try:
        return _ref_oid(repo, ref.encode())
    finally:
        repo.close()


def resolve_commitish(path: str, name: str) -> tuple[str, str] | None:
    """``(ref, oid)`` for a branch, remote branch, tag or full object id, looked up in Git's
    order (``refs/heads``, ``refs/remotes``, ``refs/tags``, then ``refs/remotes/origin/<name>``);
    ``None`` when nothing matches."""
    repo = open_repo(path)
    if repo is None:
        return None
    try:
        for ref in (
            name if name.startswith("refs/") else None,
            f"refs/heads/{name}",
            f"refs/remotes/{name}",
            f"refs/tags/{name}",
            f"refs/remotes/origin/{name}",
        ):
            if ref is None:
                continue
            oid = _ref_oid(repo, ref.encode())
            if oid is not None:
                return ref, _peel(repo, oid)
        if re.fullmatch(r"[0-9a-f]{40}", name) and name.encode() in repo.object_store:
            return name, name
        return None
    finally:
        repo.close()


def _peel(repo: Any, oid: str) -> str:
    obj = repo.object_store[oid.encode()]
    while obj.type_name == b"tag":
        obj = repo.object_store[obj.object[1]]
    return str(obj.id.decode("ascii"))


def default_branch(path: str) -> str | None:
    """The repository's default branch: ``origin/HEAD``'s target, else the main checkout's
    current branch, else ``main``/``master`` when they exist."""
    repo = open_repo(path)
    if repo is None:
        return None
    try:
        symrefs = repo.refs.get_symrefs()
        origin_head = symrefs.get(b"refs/remotes/origin/HEAD")
        if origin_head is not None:
            return str(origin_head.decode().removeprefix("refs/remotes/origin/"))
        for candidate in (b"main", b"master"):
            if _ref_oid(repo, b"refs/heads/" + candidate) is not None:
                return candidate.decode()
    finally:
        repo.close()
    facts = read_facts(path)
    return facts.branch if facts is not None else None


def read_blob_at(path: str, commit_oid: str, file_path: str) -> bytes | None:
    """The committed bytes of ``file_path`` in ``commit_oid``'s tree, or ``None``."""
    repo = open_repo(path)
    if repo is None:
        return None
    try:
        commit = repo.object_store[commit_oid.encode()]
        tree = repo.object_store[commit.tree]
        *directories, name = file_path.split("/")
        for part in directories:
            _mode, sha = tree[part.encode()]
            tree = repo.object_store[sha]
        _mode, sha = tree[name.encode()]
        blob = repo.object_store[sha]
        data = blob.as_raw_string()
        return bytes(data)
    except (KeyError, AttributeError, ValueError):
        return None
    finally:
        repo.close()


def normalize_remote(url: str) -> str:
    """The project key of a Git remote: ``remote:<host>/<path>`` with the scheme, user, port
    and ``.git`` suffix removed and the host lower-cased, so the SSH and HTTPS URLs of one
    repository agree (``git@github.com:o/r.git`` and ``https://github.com/o/r`` both give
    ``remote:github.com/o/r``). A local path remote gives ``remote:<normalized path>``."""
    text = url.strip()
    host = ""
    path = text
    if "://" in text:
        parts = urlsplit(text)
        host = (parts.hostname or "").lower()
        path = parts.path
    else:
        scp = _SCP_LIKE.match(text)
        if scp is not None and not os.path.isabs(text):
            host = scp["host"].lower()
            path = scp["path"]
    path = path.strip("/")
    path = path.removesuffix(".git").rstrip("/")
    if host:
        return f"remote:{host}/{path}"
    return f"remote:{os.path.normpath(text).removesuffix('.git')}"


def project_key_for(root: str, facts: RepoFacts | None) -> str:
    """The persisted cross-host key of a project at ``root``: its normalized Git remote when it
    has one, otherwise the root itself."""
    if facts is not None and facts.remote_url:
        return normalize_remote(facts.remote_url)
    return root


def stat_signature(paths: tuple[str, ...]) -> tuple[tuple[int, int, int, int] | None, ...]:
    """A cheap change detector: ``(inode, size, mtime_ns, ctime_ns)`` per path (``None`` when
    missing). Equal signatures mean the files did not change."""
    signature: list[tuple[int, int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            signature.append(None)
            continue
        signature.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(signature)
