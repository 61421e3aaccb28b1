"""The names of the daemon's reverse proxy: ``<script>.<branch>.<project>.localhost``.

Each label is slugified (lower case, runs of other characters → ``-``, trimmed, at most 63
characters); on a default branch (``main``, ``master``, or none) the branch label is dropped:
``web.myapp.localhost``. Any name of two or three labels under ``.localhost`` belongs to the
proxy: one it does not know is answered 404, one whose service is not running 503.
"""

from __future__ import annotations

import re

DEFAULT_BRANCHES = frozenset({"main", "master"})


def slug(label: str) -> str:
    text = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:63].strip("-")
    return text or "x"


def proxy_host(script: str, branch: str | None, project: str) -> str:
    labels = [slug(script)]
    if branch and branch not in DEFAULT_BRANCHES:
        labels.append(slug(branch))
    labels.append(slug(project))
    return ".".join(labels) + ".localhost"


def proxied_name(host_header: str) -> str | None:
    """The lower-cased name of ``host_header`` (port removed) when it is a proxy name."""
    name = host_header.strip().lower()
    if name.startswith("["):
        return None
    name = name.rsplit(":", 1)[0] if ":" in name else name
    name = name.rstrip(".")
    if not name.endswith(".localhost"):
        return None
    labels = name[: -len(".localhost")].split(".")
    if len(labels) not in (2, 3) or not all(labels):
        return None
    return name
