"""The pure parts of the scripts room: ``paseo.json`` parsing, proxy names, the bounded log."""

from __future__ import annotations

import json

import pytest

from paseo.scripts.proxy import proxied_name, proxy_host
from paseo.scripts.service import env_name
from paseo.scripts.supervisor import BoundedLog
from paseo.worktrees.project_config import ProjectConfigError, parse_project_config


def parse(document: object) -> object:
    return parse_project_config(json.dumps(document).encode(), path="/r/paseo.json")


def test_the_format_is_read_and_unknown_keys_are_kept() -> None:
    config = parse_project_config(
        json.dumps(
            {
                "worktree": {
                    "setup": {"linux": ["a", " "], "darwin": "b"},
                    "teardown": "t",
                    "terminals": [{"name": "dev", "command": "npm run dev"}],
                },
                "scripts": {
                    "test": {"command": "pytest"},
                    "web": {"command": ["npm i", "npm start"], "type": "service", "port": 3000},
                },
                "future": 1,
            }
        ).encode()
    )
    assert config.setup == ["a"]
    assert config.teardown == ["t"]
    assert [(t.name, t.command) for t in config.terminals] == [("dev", "npm run dev")]
    assert [(s.name, s.type, s.port) for s in config.scripts] == [
        ("test", "script", None),
        ("web", "service", 3000),
    ]
    assert config.services[0].command == "npm i && npm start"
    assert config.extra == {"future": 1}
    assert parse_project_config(None).scripts == []


@pytest.mark.parametrize(
    ("document", "key"),
    [
        ({"scripts": {"web": {"command": "x", "port": 70000}}}, "scripts.web.port"),
        ({"scripts": {"web": {"command": "x", "port": True}}}, "scripts.web.port"),
        ({"scripts": {"web": {"command": "x", "type": "daemon"}}}, "scripts.web.type"),
        ({"scripts": {"web": {}}}, "scripts.web.command"),
        ({"scripts": {"web": "npm start"}}, "scripts.web"),
        ({"scripts": {"bad name": {"command": "x"}}}, "scripts.bad name"),
        ({"scripts": []}, "scripts"),
        ({"worktree": {"setup": 3}}, "worktree.setup"),
        ({"worktree": {"setup": {"linux": [1]}}}, "worktree.setup.linux"),
        ({"worktree": {"terminals": [{"name": "x"}]}}, "worktree.terminals[0].command"),
        ({"worktree": []}, "worktree"),
        ([], "(top level)"),
    ],
)
def test_a_malformed_file_names_its_path_and_key(document: object, key: str) -> None:
    with pytest.raises(ProjectConfigError) as caught:
        parse(document)
    assert caught.value.data == {"path": "/r/paseo.json", "key": key}
    assert str(caught.value).startswith(f"/r/paseo.json: {key} ")


def test_not_json_is_an_error_naming_the_path() -> None:
    with pytest.raises(ProjectConfigError, match=r"/r/paseo\.json is not valid JSON"):
        parse_project_config(b"{", path="/r/paseo.json")


def test_proxy_names() -> None:
    assert proxy_host("web", "main", "My App") == "web.my-app.localhost"
    assert proxy_host("web", "master", "app") == "web.app.localhost"
    assert proxy_host("Web_1", "feat/Login", "app") == "web-1.feat-login.app.localhost"
    assert proxied_name("WEB.App.localhost:6767") == "web.app.localhost"
    assert proxied_name("a.b.c.localhost") == "a.b.c.localhost"
    assert proxied_name("localhost:6767") is None
    assert proxied_name("app.localhost") is None
    assert proxied_name("a.b.c.d.localhost") is None
    assert proxied_name("web.app.example.com") is None
    assert proxied_name("[::1]:6767") is None


def test_service_env_names() -> None:
    assert env_name("web-app") == "WEB_APP"
    assert env_name("api.v2") == "API_V2"


def test_the_log_keeps_a_bounded_tail_with_offsets() -> None:
    log = BoundedLog(limit=10)
    log.write("hello ")
    log.write("world!")
    assert log.end == 12
    assert log.since(0) == "llo world!"
    assert log.since(8) == "rld!"
    log.write("x" * 25)
    assert log.since(0) == "x" * 10
    assert log.since(log.end) == ""
