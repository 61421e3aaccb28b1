"""How deeply a decoded JSON document nests: the guard the daemon and plugins put before
anything recursive (pydantic validation, ``json.dumps``) sees a document from outside.

.. versionadded:: 2.0
"""

from __future__ import annotations

from typing import Any


def nests_deeper_than(document: Any, limit: int) -> bool:
    """Whether ``document`` nests objects and arrays deeper than ``limit`` levels (the document
    itself is level 1). An iterative walk: it must not recurse on what it guards against."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        node, depth = stack.pop()
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


__all__ = ["nests_deeper_than"]
