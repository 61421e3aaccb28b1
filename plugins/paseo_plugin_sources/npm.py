"""The ``npm`` source: one npm package installed into its own directory with a lockfile.

Spec: ``npm:<package>[@<version or range>]`` or ``npm:<absolute path to a .tgz>``;
``npm+scripts:`` instead of ``npm:`` lets the package's install scripts run (they do not by
default). The package tarball is fetched with ``npm pack`` (or copied, for a path), its entries
are checked before anything is unpacked, kept in ``.paseo-package/`` and installed with
``npm install --prefix <destination>``: ``package.json``, ``package-lock.json`` and
``node_modules/`` all end up inside the destination. npm's cache lives there too while npm runs
and is removed afterwards, so nothing is written outside the destination.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_hookspecs.interfaces.source import PluginSource, PreparedPlugin

from paseo_plugin_sources._process import run
from paseo_plugin_sources._safety import check_tarball

PACKAGE_DIR = ".paseo-package"
"""Where the package tarball is kept inside the destination (the install's identity)."""

_PREFIXES = ("npm:", "npm+scripts:")
_TARBALL_SUFFIXES = (".tgz", ".tar.gz")
_CACHE_DIR = ".npm-cache"


def split_spec(spec: str) -> tuple[str, bool]:
    """``(package spec or tarball path, install scripts allowed)``."""
    for prefix in _PREFIXES:
        if spec.startswith(prefix):
            target = spec[len(prefix) :].strip()
            if not target:
                raise InvalidParams("npm source: a package name is required")
            return target, prefix == "npm+scripts:"
    raise InvalidParams(f"not an npm spec: {spec!r}")


def _is_tarball(target: str) -> bool:
    return target.endswith(_TARBALL_SUFFIXES) and os.path.isabs(target)


def _npm_env(cache: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # A user's global or prefix setting would send the install elsewhere.
        if key.lower() not in ("npm_config_global", "npm_config_prefix", "npm_config_location")
    }
    env.update(
        {
            "npm_config_cache": str(cache),
            "npm_config_update_notifier": "false",
            "npm_config_fund": "false",
            "npm_config_audit": "false",
        }
    )
    return env


def installed_package(destination: Path) -> tuple[str, str | None]:
    """``(name, version)`` of the package installed in ``destination`` (from its artifacts)."""
    try:
        manifest = json.loads((destination / "package.json").read_text(encoding="utf-8"))
        names = list(manifest.get("dependencies", {}))
    except (OSError, ValueError, AttributeError) as exc:
        raise InvalidParams(f"npm install left no readable package.json: {exc}") from exc
    if len(names) != 1:
        raise InvalidParams(f"expected one installed npm package, found {names}")
    name = str(names[0])
    try:
        package = json.loads(
            (destination / "node_modules" / name / "package.json").read_text(encoding="utf-8")
        )
    except (OSError, ValueError) as exc:
        raise InvalidParams(f"npm package {name} is not installed: {exc}") from exc
    version = package.get("version")
    return name, str(version) if version is not None else None


def _copy_local(source: Path, target: Path) -> None:
    if not source.is_file():
        raise InvalidParams(f"npm tarball {source} does not exist")
    shutil.copyfile(source, target)


class NpmSource(PluginSource):
    """Plugins published as npm packages (see the module docstring for the spec)."""

    kind = "npm"

    def matches(self, spec: str) -> bool:
        """``npm:…`` and ``npm+scripts:…`` specs."""
        return spec.startswith(_PREFIXES)

    async def prepare(self, spec: str, destination: Path) -> PreparedPlugin:
        """Fetch, check and install the package into ``destination``."""
        npm = shutil.which("npm")
        if npm is None:
            raise Unavailable("npm is not installed (needed for npm plugin sources)")
        target, scripts = split_spec(spec)
        packages = destination / PACKAGE_DIR
        cache = destination / _CACHE_DIR
        await asyncio.to_thread(packages.mkdir)
        env = _npm_env(cache)
        if _is_tarball(target):
            source = Path(target)
            tarball = packages / source.name
            await asyncio.to_thread(_copy_local, source, tarball)
        else:
            output = await run(
                [
                    npm,
                    "pack",
                    target,
                    "--pack-destination",
                    str(packages),
                    "--json",
                    "--ignore-scripts",
                ],
                cwd=destination,
                env=env,
            )
            try:
                filename = json.loads(output)[0]["filename"]
            except (ValueError, LookupError, TypeError) as exc:
                raise InvalidParams(f"npm pack {target}: unexpected output") from exc
            tarball = packages / Path(str(filename)).name
        await asyncio.to_thread(check_tarball, tarball)
        install = [npm, "install", "--prefix", str(destination), "--no-audit", "--no-fund"]
        if not scripts:
            install.append("--ignore-scripts")
        # A relative file: path keeps package.json and the lockfile valid if the directory moves.
        install.append(f"./{PACKAGE_DIR}/{tarball.name}")
        await run(install, cwd=destination, env=env)
        await asyncio.to_thread(shutil.rmtree, cache, True)
        _, version = await asyncio.to_thread(installed_package, destination)
        return PreparedPlugin(path=destination, revision=version, remote=None)
