"""Git's ref-name rules (``git check-ref-format``), checked before any git process runs.

A branch name ``b`` is valid when ``refs/heads/b`` is a valid ref name and ``b`` is neither
``HEAD`` nor starts with ``-`` (the extra rules of ``git check-ref-format --branch``).
"""

from __future__ import annotations

from paseo_hookspecs.errors import InvalidParams

_FORBIDDEN_CHARACTERS = frozenset(" ~^:?*[\\")


def ref_name_problem(name: str) -> str | None:
    """Why ``name`` (a full ref such as ``refs/heads/x``) is not a valid ref name, or ``None``."""
    if not name:
        return "it is empty"
    if name == "@":
        return "it is the single character '@'"
    if name.startswith("/") or name.endswith("/"):
        return "it begins or ends with '/'"
    if "//" in name:
        return "it contains consecutive slashes"
    if name.endswith("."):
        return "it ends with '.'"
    if ".." in name:
        return "it contains '..'"
    if "@{" in name:
        return "it contains '@{'"
    for char in name:
        if ord(char) < 0x20 or ord(char) == 0x7F:
            return "it contains a control character"
        if char in _FORBIDDEN_CHARACTERS:
            return f"it contains {char!r}"
    for component in name.split("/"):
        if component.startswith("."):
            return f"the component {component!r} begins with '.'"
        if component.endswith(".lock"):
            return f"the component {component!r} ends with '.lock'"
    return None


def branch_name_problem(branch: str) -> str | None:
    """Why Git would reject ``branch`` as a branch name, or ``None`` when it would accept it."""
    if branch == "HEAD":
        return "'HEAD' is not a branch name"
    if branch.startswith("-"):
        return "it begins with '-'"
    return ref_name_problem(f"refs/heads/{branch}")


def validate_branch_name(branch: str) -> str:
    """``branch`` unchanged, or :class:`InvalidParams` naming the rule it breaks."""
    problem = branch_name_problem(branch)
    if problem is not None:
        raise InvalidParams(f"invalid branch name {branch!r}: {problem}", data={"branch": branch})
    return branch
