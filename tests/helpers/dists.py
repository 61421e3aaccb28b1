"""Build real (installed-form) distributions for plugin tests.

A distribution is a package directory plus a ``*.dist-info`` directory with ``METADATA`` and
``entry_points.txt`` — exactly what pip leaves in site-packages. Putting the parent directory on
``PYTHONPATH`` makes ``importlib.metadata`` find it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def make_distribution(
    site: Path,
    *,
    dist: str,
    version: str = "1.0.0",
    modules: dict[str, str],
    entry_points: dict[str, dict[str, str]],
    requires: tuple[str, ...] = (),
) -> None:
    site.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    requirements = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n{requirements}",
        encoding="utf-8",
    )
    lines = []
    for group, points in entry_points.items():
        lines.append(f"[{group}]")
        lines += [f"{name} = {target}" for name, target in points.items()]
        lines.append("")
    (info / "entry_points.txt").write_text("\n".join(lines), encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
