"""Plugin discovery, isolation and filtering, through the real ``paseo plugins list``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.dists import make_distribution

GOOD = """
from paseo_hookspecs import hookimpl
from paseo_hookspecs.registration import CliCommandGroup

def _configure(parser):
    parser.set_defaults(run=lambda args: print("hello from good") or 0)

@hookimpl
def paseo_register_cli_commands(register):
    register(CliCommandGroup(name="good", help="a good plugin", configure=_configure))
"""

IMPORT_ERROR = """
import module_that_does_not_exist
"""

EXITS = """
import sys
sys.exit(3)
"""

BAD_HOOK = """
from paseo_hookspecs import hookimpl

@hookimpl
def paseo_register_providers(wrong_argument):
    pass
"""

UNKNOWN_HOOK = """
from paseo_hookspecs import hookimpl

@hookimpl
def paseo_no_such_hook(register):
    pass
"""


def _marker_module(marker: Path) -> str:
    return f"""
from pathlib import Path
Path({str(marker)!r}).write_text("imported")
from paseo_hookspecs import hookimpl

@hookimpl
def paseo_shutdown(context):
    pass
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return tmp_path / "site"


def _list(run_paseo, site: Path, *extra: str, env: dict[str, str] | None = None):
    full_env = {"PYTHONPATH": str(site), "PASEO_STRICT_PLUGINS": "0", **(env or {})}
    result = run_paseo("plugins", "list", "-o", "json", *extra, env=full_env)
    assert result.returncode == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_good_third_party_plugin_is_loaded_and_listed(run_paseo, site: Path) -> None:
    make_distribution(
        site,
        dist="paseo-good",
        modules={"good_plugin": GOOD},
        entry_points={"paseo": {"good": "good_plugin"}},
    )
    rows = _list(run_paseo, site)
    assert rows["good"] == {
        "name": "good",
        "version": "1.0.0",
        "distribution": "paseo-good",
        "builtin": False,
        "hooks": ["paseo_register_cli_commands"],
        "source": "entrypoint",
        "enabled": True,
        "error": None,
    }
    result = run_paseo("good", env={"PYTHONPATH": str(site), "PASEO_STRICT_PLUGINS": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hello from good"


def test_broken_plugins_are_listed_with_their_error_and_the_good_one_still_works(
    run_paseo, site: Path
) -> None:
    make_distribution(
        site,
        dist="paseo-good",
        modules={"good_plugin": GOOD},
        entry_points={"paseo": {"good": "good_plugin"}},
    )
    make_distribution(
        site,
        dist="paseo-broken",
        modules={
            "broken_import": IMPORT_ERROR,
            "broken_exit": EXITS,
            "broken_hook": BAD_HOOK,
            "broken_unknown": UNKNOWN_HOOK,
        },
        entry_points={
            "paseo": {
                "imports": "broken_import",
                "exits": "broken_exit",
                "badhook": "broken_hook",
                "unknown": "broken_unknown",
            }
        },
    )
    rows = _list(run_paseo, site)
    assert "ModuleNotFoundError" in rows["imports"]["error"]
    assert "module_that_does_not_exist" in rows["imports"]["error"]
    assert rows["exits"]["error"] == "SystemExit: 3"
    assert "wrong_argument" in rows["badhook"]["error"]
    assert "paseo_no_such_hook" in rows["unknown"]["error"]
    assert rows["good"]["error"] is None
    assert rows["good"]["hooks"] == ["paseo_register_cli_commands"]
    result = run_paseo("good", env={"PYTHONPATH": str(site), "PASEO_STRICT_PLUGINS": "0"})
    assert result.stdout.strip() == "hello from good"


def test_a_broken_plugin_prints_one_line_and_its_traceback_goes_to_the_cli_log(
    run_paseo, site: Path, paseo_home: Path
) -> None:
    make_distribution(
        site,
        dist="paseo-broken",
        modules={"broken_import": IMPORT_ERROR},
        entry_points={"paseo": {"imports": "broken_import"}},
    )
    paseo_home.mkdir()
    env = {"PYTHONPATH": str(site), "PASEO_STRICT_PLUGINS": "0", "PASEO_HOME": str(paseo_home)}
    result = run_paseo("plugins", "list", env=env)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "plugin imports failed to load: ModuleNotFoundError" in result.stderr
    log = (paseo_home / "cli.log").read_text(encoding="utf-8")
    assert "Traceback" in log
    assert "module_that_does_not_exist" in log


def test_strict_mode_makes_a_load_failure_fatal(run_paseo, site: Path) -> None:
    make_distribution(
        site,
        dist="paseo-broken",
        modules={"broken_exit": EXITS},
        entry_points={"paseo": {"exits": "broken_exit"}},
    )
    result = run_paseo(
        "plugins", "list", env={"PYTHONPATH": str(site), "PASEO_STRICT_PLUGINS": "1"}
    )
    assert result.returncode != 0
    assert "exits" in result.stderr
    assert "SystemExit" in result.stderr


def test_plugin_disabled_in_config_is_never_imported(
    run_paseo, site: Path, paseo_home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "imported.txt"
    make_distribution(
        site,
        dist="paseo-marker",
        modules={"marker_plugin": _marker_module(marker)},
        entry_points={"paseo": {"marker": "marker_plugin"}},
    )
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(json.dumps({"plugins": {"marker": {"enabled": False}}}))
    rows = _list(run_paseo, site)
    assert rows["marker"]["enabled"] is False
    assert rows["marker"]["hooks"] == []
    assert not marker.exists()


def test_plugins_enabled_false_disables_every_third_party_plugin(
    run_paseo, site: Path, paseo_home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "imported.txt"
    make_distribution(
        site,
        dist="paseo-marker",
        modules={"marker_plugin": _marker_module(marker)},
        entry_points={"paseo": {"marker": "marker_plugin"}},
    )
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(json.dumps({"pluginsEnabled": False}))
    rows = _list(run_paseo, site)
    assert rows["marker"]["enabled"] is False
    assert not marker.exists()


def test_load_plugins_env_limits_third_party_loading(run_paseo, site: Path, tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    make_distribution(
        site,
        dist="paseo-marker",
        modules={"marker_plugin": _marker_module(marker)},
        entry_points={"paseo": {"marker": "marker_plugin"}},
    )
    make_distribution(
        site,
        dist="paseo-good",
        modules={"good_plugin": GOOD},
        entry_points={"paseo": {"good": "good_plugin"}},
    )
    rows = _list(run_paseo, site, env={"PASEO_LOAD_PLUGINS": "good"})
    assert rows["good"]["enabled"] is True
    assert rows["marker"]["enabled"] is False
    assert not marker.exists()
    rows = _list(run_paseo, site, env={"PASEO_LOAD_PLUGINS": ""})
    assert rows["good"]["enabled"] is False


def test_directory_plugin_from_config_loads(run_paseo, paseo_home: Path, tmp_path: Path) -> None:
    plugin_dir = tmp_path / "dir-plugin"
    (plugin_dir / "src" / "dir_plugin").mkdir(parents=True)
    (plugin_dir / "src" / "dir_plugin" / "__init__.py").write_text(GOOD.replace("good", "dirgood"))
    (plugin_dir / "pyproject.toml").write_text(
        '[project]\nname = "paseo-dir-plugin"\nversion = "0.3.0"\n\n'
        '[project.entry-points.paseo]\ndirplugin = "dir_plugin"\n'
    )
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(
        json.dumps(
            {
                "plugins": {
                    "dirplugin": {"source": "directory", "path": str(plugin_dir), "enabled": True}
                }
            }
        )
    )
    result = run_paseo("plugins", "list", "-o", "json", check=True)
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["dirplugin"]["source"] == "directory"
    assert rows["dirplugin"]["version"] == "0.3.0"
    assert rows["dirplugin"]["hooks"] == ["paseo_register_cli_commands"]
    assert rows["dirplugin"]["error"] is None
    assert run_paseo("dirgood", check=True).stdout.strip() == "hello from dirgood"


def test_directory_plugin_with_missing_path_is_listed_with_error(
    run_paseo, paseo_home: Path, tmp_path: Path
) -> None:
    paseo_home.mkdir()
    (paseo_home / "config.json").write_text(
        json.dumps(
            {"plugins": {"gone": {"source": "directory", "path": str(tmp_path / "nowhere")}}}
        )
    )
    result = run_paseo(
        "plugins", "list", "-o", "json", env={"PASEO_STRICT_PLUGINS": "0"}, check=True
    )
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert "not found" in rows["gone"]["error"]


def test_builtins_only_with_all_and_hook_filter(run_paseo, site: Path) -> None:
    make_distribution(
        site,
        dist="paseo-good",
        modules={"good_plugin": GOOD},
        entry_points={"paseo": {"good": "good_plugin"}},
    )
    without_all = _list(run_paseo, site)
    assert all(not row["builtin"] for row in without_all.values())
    with_all = _list(run_paseo, site, "--all")
    assert any(row["builtin"] for row in with_all.values())
    assert all(row["distribution"] == "paseo" for row in with_all.values() if row["builtin"])
    hooked = _list(run_paseo, site, "--all", "--hook", "paseo_register_cli_commands")
    # The built-in Hub, loops, chat and relay plugins contribute `paseo hub`, `paseo loop`,
    # `paseo chat` and `paseo relay` (and `paseo daemon pair`); no other
    # built-in adds commands.
    assert set(hooked) == {"good", "hub", "loops", "chat", "relay"}


def test_plugins_list_does_not_create_the_home(run_paseo, paseo_home: Path) -> None:
    run_paseo("plugins", "list", check=True)
    assert not paseo_home.exists()


def test_disabled_plugins_are_not_loaded_even_built_in() -> None:
    from paseo.plugins import LoadPolicy

    policy = LoadPolicy.from_environment(env={"PASEO_DISABLE_PLUGINS": " mcp, other "})
    assert not policy.allows("mcp", builtin=True)
    assert not policy.allows("other", builtin=False)
    assert policy.allows("websocket", builtin=True)
