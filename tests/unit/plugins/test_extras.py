"""A plugin or driver whose extra is not installed is listed as unavailable with the exact
install command, never imported, and never a failure (strict mode accepts it); once the extra's
packages are installed it loads as any other."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest
from helpers.dists import make_distribution
from paseo_hookspecs.errors import Unavailable

from paseo.plugins.drivers import load_driver
from paseo.plugins.extras import missing_requirements, split_target

NEEDY = """
from pathlib import Path
Path({marker!r}).write_text("imported")
from paseo_hookspecs import hookimpl

@hookimpl
def paseo_shutdown(context):
    pass
"""

ENGINE = """
class Engine:
    def __init__(self, settings):
        self.settings = settings
"""


def _needy(site: Path, marker: Path, *, installed: bool) -> None:
    make_distribution(
        site,
        dist="paseo-needy",
        modules={"needy_plugin": NEEDY.format(marker=str(marker)), "needy_engine": ENGINE},
        entry_points={
            "paseo": {"needy": "needy_plugin [voice]"},
            "paseo.speech.stt": {"needy-stt": "needy_engine:Engine [voice]"},
        },
        requires=(
            "pluggy>=1.5",
            'paseo-needy-voice-engine>=1; extra == "voice"',
            'paseo-needy[voice]; extra == "all"',
        ),
    )
    if installed:
        make_distribution(site, dist="paseo-needy-voice-engine", modules={}, entry_points={})


def _list(run_paseo, site: Path, *args: str, strict: str = "1") -> dict[str, dict[str, object]]:
    result = run_paseo(
        "plugins",
        "list",
        "-o",
        "json",
        *args,
        env={"PYTHONPATH": str(site), "PASEO_STRICT_PLUGINS": strict},
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return {f"{row['name']} {row['hooks']}": row for row in json.loads(result.stdout)}


def test_a_plugin_without_its_extra_is_listed_with_the_install_command(
    run_paseo, tmp_path: Path
) -> None:
    site, marker = tmp_path / "site", tmp_path / "imported"
    _needy(site, marker, installed=False)
    rows = _list(run_paseo, site)
    plugin = rows["needy []"]
    assert plugin["error"] == (
        "unavailable: paseo-needy-voice-engine is not installed (the 'voice' extra of "
        "paseo-needy): pip install 'paseo-needy[voice]'"
    )
    assert plugin["enabled"] is True
    driver = rows["needy-stt ['driver:paseo.speech.stt']"]
    assert driver["error"] == plugin["error"]
    assert not marker.exists(), "a plugin whose extra is missing was imported"


def test_with_the_extra_installed_the_plugin_loads(run_paseo, tmp_path: Path) -> None:
    site, marker = tmp_path / "site", tmp_path / "imported"
    _needy(site, marker, installed=True)
    rows = _list(run_paseo, site)
    assert rows["needy ['paseo_shutdown']"]["error"] is None
    assert rows["needy-stt ['driver:paseo.speech.stt']"]["error"] is None
    assert marker.read_text() == "imported"


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    yield site
    for name in ("needy_plugin", "needy_engine"):
        sys.modules.pop(name, None)


def test_loading_a_driver_without_its_extra_says_what_to_install(on_path: Path) -> None:
    _needy(on_path, on_path / "imported", installed=False)
    with pytest.raises(Unavailable) as refused:
        load_driver("paseo.speech.stt", "needy-stt")
    assert str(refused.value) == (
        "the 'needy-stt' paseo.speech.stt driver is unavailable: paseo-needy-voice-engine is "
        "not installed (the 'voice' extra of paseo-needy): pip install 'paseo-needy[voice]'"
    )
    assert "needy_engine" not in sys.modules


def test_loading_a_driver_with_its_extra_installed(on_path: Path) -> None:
    _needy(on_path, on_path / "imported", installed=True)
    engine = load_driver("paseo.speech.stt", "needy-stt")
    assert engine.__name__ == "Engine"


def test_an_extra_naming_another_extra_of_its_distribution_is_followed(on_path: Path) -> None:
    _needy(on_path, on_path / "imported", installed=False)
    assert missing_requirements("paseo-needy", ("all",)) == ["paseo-needy-voice-engine"]
    assert missing_requirements("paseo-needy", ("voice",)) == ["paseo-needy-voice-engine"]
    # Requirements of no extra (pluggy) and of another extra are not asked for.
    assert missing_requirements("paseo-needy", ("other",)) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("pkg.mod:Cls [speech]", ("pkg.mod:Cls", ("speech",))),
        ("pkg.mod:Cls[a, b]", ("pkg.mod:Cls", ("a", "b"))),
        ("pkg.mod", ("pkg.mod", ())),
        (" pkg.mod:obj.attr ", ("pkg.mod:obj.attr", ())),
    ],
)
def test_an_entry_point_value_splits_into_target_and_extras(
    value: str, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert split_target(value) == expected
