"""Turning what the user typed after ``paseo plugins install`` into a canonical source spec.

Explicit forms pass through: ``git+<url>``, ``npm:…``, ``npm+scripts:…``, ``pypi:…``,
``directory:…`` (a relative path after ``npm:``, ``pypi:`` or ``directory:`` is made absolute).
A URL becomes ``git+<url>`` (the git source refuses schemes it does not allow). A local path is
classified by what it is: a Git repository (optionally ``path@ref``) is ``git+file://…``, a
``.tgz`` is an npm tarball, a ``.whl`` a wheel, any other directory a directory source.
"""

from __future__ import annotations

import re
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams

_EXPLICIT = ("git+", "npm:", "npm+scripts:", "pypi:", "directory:")
_PATH_PREFIXES = ("npm:", "npm+scripts:", "pypi:", "directory:")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


def is_git_repository(path: Path) -> bool:
    """A work tree (``.git`` inside) or a bare repository (``HEAD`` and ``objects/``)."""
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _looks_like_path(text: str, cwd: Path) -> bool:
    return text.startswith(("/", "./", "../", "~")) or (cwd / text).exists()


def _absolute(text: str, cwd: Path) -> Path:
    return (cwd / Path(text).expanduser()).resolve()


def canonical_spec(spec: str, cwd: Path) -> str:
    """The canonical spec for ``spec`` typed in ``cwd``; raise :class:`InvalidParams` when it
    cannot be classified."""
    text = spec.strip()
    if not text:
        raise InvalidParams("a plugin source is required")
    for prefix in _PATH_PREFIXES:
        if text.startswith(prefix):
            rest = text[len(prefix) :].strip()
            path_like = prefix == "directory:" or rest.endswith((".tgz", ".tar.gz", ".whl"))
            if path_like and _looks_like_path(rest, cwd):
                return f"{prefix}{_absolute(rest, cwd)}"
            return f"{prefix}{rest}"
    if text.startswith(_EXPLICIT):
        return text
    if _URL.match(text):
        return f"git+{text}"
    if _SCP_LIKE.match(text):
        raise InvalidParams(
            f"{text!r}: scp-style Git addresses are not accepted; use ssh://user@host/path"
        )
    path_text, ref = text, None
    if not _absolute(text, cwd).exists() and "@" in text:
        head, _, tail = text.rpartition("@")
        if "/" not in tail and _absolute(head, cwd).exists():
            path_text, ref = head, tail
    path = _absolute(path_text, cwd)
    if path.is_dir() and is_git_repository(path):
        return f"git+{path.as_uri()}" + (f"@{ref}" if ref else "")
    if ref is not None:
        raise InvalidParams(f"{path_text} is not a Git repository, so @{ref} means nothing")
    if path.is_file() and path.name.endswith((".tgz", ".tar.gz")):
        return f"npm:{path}"
    if path.is_file() and path.name.endswith(".whl"):
        return f"pypi:{path}"
    if path.is_dir():
        return f"directory:{path}"
    if _looks_like_path(text, cwd):
        raise InvalidParams(f"{text}: no such file or directory")
    raise InvalidParams(
        f"cannot tell what {text!r} is; prefix it with npm:, pypi:, directory: or use a Git URL"
    )
