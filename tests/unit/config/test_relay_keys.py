"""``daemon.relay`` as the TypeScript Paseo's strict schema has it: a new home is written with
the relay off, and keys that schema refuses are never written."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from paseo.config import ConfigError
from paseo.config.load import NEW_HOME_CONFIG, materialize_new_home, set_path


def test_a_new_home_materializes_the_relay_off(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    assert materialize_new_home(path)
    assert json.loads(path.read_text()) == {"version": 1, "daemon": {"relay": {"enabled": False}}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text('{"daemon": {"relay": {"enabled": true}}}')
    assert not materialize_new_home(path)  # an existing file is never touched
    assert json.loads(path.read_text())["daemon"]["relay"]["enabled"] is True
    assert NEW_HOME_CONFIG["daemon"]["relay"] == {"enabled": False}


@pytest.mark.parametrize("key", ["useTls", "publicUseTls"])
def test_keys_the_typescript_schema_refuses_are_not_written(tmp_path: Path, key: str) -> None:
    path = tmp_path / "config.json"
    materialize_new_home(path)
    with pytest.raises(ConfigError, match=f"daemon.relay.{key}"):
        set_path(path, f"daemon.relay.{key}", True)
    assert json.loads(path.read_text()) == NEW_HOME_CONFIG
    set_path(path, "daemon.relay.endpoint", "127.0.0.1:8787")
    relay = json.loads(path.read_text())["daemon"]["relay"]
    assert relay == {"enabled": False, "endpoint": "127.0.0.1:8787"}
