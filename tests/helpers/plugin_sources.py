"""Fixtures for managed-plugin tests: a Python plugin in a Git repository, npm packages, and the
environment the real CLI needs to find the built-in plugin sources.

Git repositories are written with dulwich (no ``git`` binary needed).
"""

from __future__ import annotations

import importlib.util
import io
import os
import textwrap
from pathlib import Path

from helpers.dists import make_distribution

REPO = Path(__file__).resolve().parents[2]

_AUTHOR = b"Test <test@example.invalid>"


def plugin_files(
    version: int, *, broken: bool = False, module: str = "paseo_hello_plugin"
) -> dict[str, str]:
    """A hook plugin adding the provider ``hello`` whose label carries ``version``.

    ``broken`` makes its module fail at import time.
    """
    pyproject = f"""\
        [project]
        name = "paseo-hello"
        version = "0.{version}.0"

        [project.entry-points.paseo]
        hello = "{module}.plugin"
        """
    plugin = f"""\
        from paseo_hookspecs import hookimpl
        from paseo_hookspecs.interfaces.agent import AgentProvider
        {"import paseo_module_that_does_not_exist" if broken else ""}


        class HelloProvider(AgentProvider):
            id = "hello"
            label = "Hello v{version}"

            async def availability(self):
                return {{"status": "ready"}}

            async def list_models(self, launcher):
                return []

            async def list_modes(self, launcher):
                return []

            async def create_session(self, config, sink, launcher):
                raise NotImplementedError

            async def resume_session(self, handle, config, sink, launcher):
                raise NotImplementedError


        @hookimpl
        def paseo_register_providers(register):
            register(HelloProvider())
        """
    return {
        "pyproject.toml": textwrap.dedent(pyproject),
        f"{module}/__init__.py": "",
        f"{module}/plugin.py": textwrap.dedent(plugin),
    }


def write_tree(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


class GitPluginRepo:
    """A work tree whose commits are pushed to a bare repository (the install remote)."""

    def __init__(self, root: Path) -> None:
        from dulwich import porcelain

        self.work = root / "work"
        self.bare = root / "hello.git"
        self.work.mkdir(parents=True)
        porcelain.init(str(self.work)).close()
        self._cloned = False

    def commit(self, files: dict[str, str], message: str) -> str:
        """Write ``files``, commit them and push to the bare repository; return the sha."""
        from dulwich import porcelain

        write_tree(self.work, files)
        with porcelain.open_repo_closing(str(self.work)) as repo:
            porcelain.add(repo, [str(self.work / name) for name in files])
            sha = porcelain.commit(
                repo, message=message.encode(), author=_AUTHOR, committer=_AUTHOR
            )
        if not self._cloned:
            porcelain.clone(
                str(self.work), str(self.bare), bare=True, errstream=io.BytesIO()
            ).close()
            self._cloned = True
        else:
            porcelain.push(
                str(self.work),
                str(self.bare),
                b"refs/heads/master",
                errstream=io.BytesIO(),
                outstream=io.BytesIO(),
            )
        return sha.decode()

    def tag(self, name: str, sha: str) -> None:
        from dulwich import porcelain

        porcelain.tag_create(str(self.work), name, objectish=sha)
        porcelain.push(
            str(self.work),
            str(self.bare),
            f"refs/tags/{name}".encode(),
            errstream=io.BytesIO(),
            outstream=io.BytesIO(),
        )


def cli_environment(tmp: Path) -> dict[str, str]:
    """Environment for running the real CLI with the built-in plugin sources available.

    Until ``plugin-sources`` is declared among the ``paseo`` distribution's entry points (and
    the editable install maps ``plugins/``), a throw-away distribution declares it; once it is,
    this adds nothing.
    """
    from paseo_hookspecs import HOOK_GROUP

    from paseo.plugins.discovery import entry_point_candidates

    paths = []
    if importlib.util.find_spec("paseo_plugin_sources") is None:
        paths.append(str(REPO / "plugins"))
    if not any(c.name == "plugin-sources" for c in entry_point_candidates(HOOK_GROUP)):
        site = tmp / "bridge-site"
        if not site.exists():
            make_distribution(
                site,
                dist="paseo-plugin-sources-bridge",
                modules={},
                entry_points={HOOK_GROUP: {"plugin-sources": "paseo_plugin_sources.plugin"}},
            )
        paths.append(str(site))
    existing = os.environ.get("PYTHONPATH")
    if existing:
        paths.append(existing)
    return {"PYTHONPATH": os.pathsep.join(paths)} if paths else {}


def make_wheel(
    out: Path,
    *,
    name: str,
    version: str,
    files: dict[str, str],
    entry_points: dict[str, dict[str, str]],
    requires: tuple[str, ...] = (),
) -> Path:
    """Write a pure-Python wheel by the wheel spec (a zip with a ``.dist-info``).

    Written directly rather than built: the test environment has no ``wheel`` package for
    setuptools and must not reach an index to fetch one.
    """
    import base64
    import hashlib
    import zipfile

    out.mkdir(parents=True, exist_ok=True)
    stem = f"{name.replace('-', '_')}-{version}"
    info = f"{stem}.dist-info"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    metadata += [f"Requires-Dist: {requirement}" for requirement in requires]
    points = []
    for group, entries in entry_points.items():
        points.append(f"[{group}]")
        points += [f"{key} = {value}" for key, value in entries.items()]
    contents = {
        **files,
        f"{info}/METADATA": "\n".join(metadata) + "\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: paseo-tests\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
        f"{info}/entry_points.txt": "\n".join(points) + "\n",
    }
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    wheel = out / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel
