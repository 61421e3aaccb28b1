"""The ``git`` source: clone a repository with dulwich and check out one resolved commit.

Spec: ``git+<url>[@<ref>]`` where ``<url>`` is ``https://``, ``ssh://`` or ``file://`` (a bare
``https://``/``ssh://``/``file://`` URL is accepted too). ``<ref>`` is a tag, a branch or a
commit id (full or abbreviated); without it the remote's default branch is used. The checkout is
left with a detached ``HEAD`` at the resolved commit, which is returned as the revision.
No ``git`` binary is needed and no repository hook runs (a fresh clone has none).
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from paseo_hookspecs.errors import InvalidParams, NotFound
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

if TYPE_CHECKING:
    from dulwich.repo import Repo

ALLOWED_SCHEMES = frozenset({"https", "ssh", "file"})
"""Plain ``http`` and ``git://`` are refused: neither authenticates the server."""

_PREFIX = "git+"


def split_spec(spec: str) -> tuple[str, str | None]:
    """``(url, ref)`` of a git spec; raise :class:`InvalidParams` for a refused scheme.

    The ref follows the last ``@`` when no ``/`` comes after it, so the user part of
    ``ssh://git@host/repo`` is not mistaken for a ref.
    """
    url = spec.removeprefix(_PREFIX)
    ref: str | None = None
    head, at, tail = url.rpartition("@")
    if at and tail and "/" not in tail and "://" in head:
        url, ref = head, tail
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        allowed = ", ".join(f"{s}://" for s in sorted(ALLOWED_SCHEMES))
        raise InvalidParams(f"git source {url!r}: only {allowed} URLs are allowed")
    return url, ref


SymlinkFn = Callable[[str | bytes | os.PathLike[str], str | bytes | os.PathLike[str]], None]


def _safe_symlink(root: Path) -> SymlinkFn:
    """A dulwich ``symlink_fn`` refusing links that point outside the checkout."""
    real_root = os.path.realpath(root)

    def symlink(
        source: str | bytes | os.PathLike[str], target: str | bytes | os.PathLike[str]
    ) -> None:
        link = os.fsdecode(source)
        where = os.fsdecode(target)
        resolved = os.path.normpath(os.path.join(os.path.dirname(where), link))
        if os.path.isabs(link) or os.path.commonpath([real_root, resolved]) != real_root:
            raise InvalidParams(f"refusing symlink {where!r} -> {link!r}: outside the checkout")
        os.symlink(link, where)

    return symlink


def _resolve(repo: Repo, ref: str | None) -> bytes:
    from dulwich.objectspec import parse_commit

    candidates = ["HEAD"] if ref is None else [ref, f"refs/remotes/origin/{ref}"]
    for candidate in candidates:
        try:
            return bytes(parse_commit(repo, candidate.encode()).id)
        except (KeyError, ValueError):
            continue
    raise NotFound(f"git ref {ref!r} not found in the repository")


def _clone(url: str, ref: str | None, destination: Path) -> str:
    from dulwich import porcelain
    from dulwich.index import build_index_from_tree
    from dulwich.objects import Commit

    errors = io.BytesIO()
    try:
        repo = porcelain.clone(url, str(destination), checkout=False, errstream=errors)
    except Exception as exc:
        detail = errors.getvalue().decode("utf-8", "replace").strip() or str(exc)
        raise NotFound(f"cannot clone {url}: {detail}") from exc
    with repo:
        sha = _resolve(repo, ref)
        commit = repo[sha]
        assert isinstance(commit, Commit)
        # Detach HEAD at the commit so the checkout states exactly what is installed. (Ref and
        # object id types are NewTypes in recent dulwich and plain bytes in older releases.)
        refs: Any = repo.refs
        refs.remove_if_equals(b"HEAD", None)
        refs.add_if_new(b"HEAD", sha)
        build_index_from_tree(
            repo.path,
            repo.index_path(),
            repo.object_store,
            commit.tree,
            symlink_fn=_safe_symlink(destination),
        )
    return sha.decode("ascii")


class GitSource(PluginSource):
    """Plugins from Git repositories (see the module docstring for the spec)."""

    kind = "git"

    def matches(self, spec: str) -> bool:
        """``git+…`` specs and bare ``https://``, ``ssh://`` and ``file://`` URLs."""
        if spec.startswith(_PREFIX):
            return True
        return urlsplit(spec).scheme.lower() in ALLOWED_SCHEMES

    async def prepare(self, spec: str, destination: Path) -> PreparedPlugin:
        """Clone into ``destination`` and check out the resolved commit."""
        url, ref = split_spec(spec)
        revision = await asyncio.to_thread(_clone, url, ref, destination)
        return PreparedPlugin(path=destination, revision=revision, remote=url)
