"""The agent commands of the real ``paseo`` CLI against the real daemon."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.daemon_rpc import LiveDaemon
from helpers.waiting import wait_for

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def paseo(agent_daemon: LiveDaemon, run_paseo: Run) -> Run:
    def run(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
        return run_paseo(*args, env={"PASEO_HOME": str(agent_daemon.home)}, **options)

    return run


def test_run_prints_the_reply_and_ls_inspect_show_the_agent(paseo: Run, workdir: Path) -> None:
    done = paseo(
        "run",
        "--provider",
        "scripted",
        "--cwd",
        str(workdir),
        "--title",
        "t1",
        "--label",
        "team=x",
        "hello world",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello world\n"
    assert "finished (idle)" in done.stderr
    detached = paseo("run", "-d", "-q", "--provider", "scripted", "--cwd", str(workdir), "bye")
    assert detached.returncode == 0, detached.stderr
    agent_id = detached.stdout.strip()
    assert len(agent_id) == 36
    assert detached.stderr == ""
    waited = paseo("wait", agent_id[:8], "--timeout", "20s")
    assert waited.returncode == 0, waited.stderr
    # `wait` prints the reply, as `run` and `send` do (issue 27, item 7).
    assert waited.stdout == "echo: bye\n"
    listed = json.loads(paseo("ls", "-o", "json", check=True).stdout)
    assert {a["title"] for a in listed} == {"t1", None}
    labelled = paseo("ls", "--label", "team=x", check=True).stdout
    assert "t1" in labelled
    assert agent_id[:8] not in labelled
    inspected = paseo("inspect", "t1", check=True).stdout
    assert "scripted" in inspected
    assert "attention:" in inspected
    logs = paseo("logs", agent_id, check=True).stdout
    assert logs.splitlines()[0] == "> bye"
    assert "echo: bye" in logs
    errors_only = paseo("logs", agent_id, "--filter", "errors", check=True).stdout
    assert errors_only == ""
    tail = paseo("logs", agent_id, "--tail", "1", "-o", "json", check=True).stdout
    assert json.loads(tail)["event"]["type"] == "attention_required"


def test_send_wait_and_exit_codes(paseo: Run, workdir: Path) -> None:
    agent = paseo(
        "run",
        "-d",
        "-q",
        "--provider",
        "scripted",
        "--cwd",
        str(workdir),
        "[[slow:30]] slow",
        check=True,
    ).stdout.strip()
    timed_out = paseo("wait", agent, "--timeout", "0.5")
    assert timed_out.returncode == 6
    assert "wait timed out" in timed_out.stderr
    replaced = paseo("send", agent, "quick")
    assert replaced.returncode == 0
    assert replaced.stdout == "echo: quick\n"
    failed = paseo("send", agent, "[[fail:it broke]]")
    assert failed.returncode == 5
    assert "it broke" in failed.stderr
    asking = paseo("send", agent, "[[write:a.txt:x]]")
    assert asking.returncode == 4
    assert "paseo permit allow" in asking.stderr
    listed = paseo("permit", "ls", "-o", "json", check=True)
    request = json.loads(listed.stdout)[0]
    assert request["title"] == "Write a.txt"
    assert request["agentId"] == agent
    allowed = paseo("permit", "allow", agent[:8], "--input", '{"content": "edited"}')
    assert allowed.returncode == 0
    assert allowed.stdout == f"allowed {request['requestId']}\n"
    assert paseo("wait", agent).returncode == 0
    assert (workdir / "a.txt").read_text() == "edited"
    # Options may sit between ID and PROMPT.
    paseo("send", agent, "--no-wait", "[[write:b.txt:x]]", check=True)
    assert paseo("wait", agent).returncode == 4
    paseo("permit", "deny", agent, "--message", "no", "--interrupt", check=True)
    assert paseo("wait", agent).returncode == 0
    assert not (workdir / "b.txt").exists()
    prompt = workdir / "prompt.txt"
    prompt.write_text("from a file")
    from_file = paseo("send", agent, "--prompt-file", str(prompt))
    assert from_file.stdout == "echo: from a file\n"
    first = paseo("send", "--no-wait", "--message-id", "same", "-o", "json", agent, "dup")
    second = paseo("send", agent, "dup", "--no-wait", "--message-id", "same", "-o", "json")
    assert json.loads(first.stdout)["accepted"] is True
    assert json.loads(second.stdout)["accepted"] is False


def test_stop_archive_delete_agent_commands_and_providers(paseo: Run, workdir: Path) -> None:
    agent = paseo(
        "run",
        "-q",
        "--provider",
        "scripted",
        "--cwd",
        str(workdir),
        "--title",
        "worker",
        "hi",
        check=True,
    ).stdout.strip()
    assert paseo("agent", "mode", "worker", "--list", check=True).stdout.count("\n") == 3
    paseo("agent", "mode", "worker", "plan", check=True)
    assert paseo("agent", "mode", "worker", check=True).stdout == "plan\n"
    paseo("agent", "update", "worker", "--title", "renamed", "--label", "k=v", check=True)
    record = json.loads(paseo("inspect", "renamed", "-o", "json", check=True).stdout)["agent"]
    assert record["labels"] == {"k": "v"}
    assert record["id"] == agent
    assert paseo("agent", "reload", "renamed", check=True).stdout == f"reloaded {agent[:8]}\n"
    # The scripted program reports no slash commands; a stopped agent says why it lists none.
    assert json.loads(paseo("agent", "commands", "renamed", "-o", "json", check=True).stdout) == []
    assert paseo("agent", "ls", "-q", check=True).stdout.strip() == agent
    assert paseo("stop", "--all", check=True).stdout == f"stopped {agent[:8]}\n"
    assert json.loads(paseo("inspect", agent, "-o", "json", check=True).stdout)["live"] is False
    stopped = paseo("agent", "commands", agent, check=True)
    assert "no running session" in stopped.stderr
    paseo("archive", agent, check=True)
    assert paseo("ls", "-q", check=True).stdout == ""
    assert agent in paseo("ls", "-a", "-q", check=True).stdout
    paseo("archive", "--restore", agent, check=True)
    paseo("delete", agent, check=True)
    missing = paseo("inspect", agent)
    assert missing.returncode == 1
    assert "not_found" in missing.stderr
    providers = paseo("provider", "ls", check=True).stdout
    assert "scripted" in providers
    assert "ready" in providers
    models = paseo("provider", "models", "scripted", "--thinking", check=True).stdout
    assert "default" in models
    assert "low" in models
    unknown = paseo("run", "--provider", "nope", "--cwd", str(workdir), "x")
    assert unknown.returncode == 1
    assert "unknown provider 'nope'" in unknown.stderr


def test_attach_shows_history_and_live_events(
    agent_daemon: LiveDaemon, paseo: Run, workdir: Path
) -> None:
    agent = paseo(
        "run", "-q", "--provider", "scripted", "--cwd", str(workdir), "first", check=True
    ).stdout.strip()
    env = dict(os.environ, PASEO_HOME=str(agent_daemon.home))
    attach = subprocess.Popen(
        [sys.executable, "-m", "paseo", "attach", agent],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []

    def read() -> None:
        assert attach.stdout is not None
        for line in attach.stdout:
            lines.append(line.rstrip("\n"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_for(lambda: "echo: first" in lines, what="the history")
        paseo("send", agent, "second", check=True)
        wait_for(lambda: "echo: second" in lines, what="the live reply")
        assert "> second" in lines
        assert not any("\x1b[" in line for line in lines), "no colour when not a terminal"
    finally:
        attach.terminate()
        attach.wait(10)


def test_not_running_daemon_is_reported(run_paseo: Run) -> None:
    result = run_paseo("ls")
    assert result.returncode == 1
    assert "not running" in result.stderr


def test_logs_and_attach_honour_the_output_format_and_tail_counts_what_is_shown(
    agent_daemon: LiveDaemon, paseo: Run, workdir: Path
) -> None:
    import yaml

    agent = paseo(
        "run", "-q", "--provider", "scripted", "--cwd", str(workdir), "one", check=True
    ).stdout.strip()
    paseo("send", agent, "two", check=True)
    json_lines = paseo("logs", agent, "-o", "json", check=True).stdout.splitlines()
    as_json = [json.loads(line) for line in json_lines]
    as_yaml = list(yaml.safe_load_all(paseo("logs", agent, "-o", "yaml", check=True).stdout))
    assert as_yaml == as_json
    full = paseo("logs", agent, check=True).stdout.splitlines()
    assert len(as_json) > len(full), "some stored entries show nothing"
    for count in (1, 2, 3):
        shown = paseo("logs", agent, "--tail", str(count), check=True).stdout.splitlines()
        assert shown == full[-count:]
    env = dict(os.environ, PASEO_HOME=str(agent_daemon.home))
    attach = subprocess.Popen(
        [sys.executable, "-m", "paseo", "attach", agent, "--tail", "2", "-o", "json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []

    def read() -> None:
        assert attach.stdout is not None
        for line in attach.stdout:
            lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_for(lambda: len(lines) >= 2, what="the attached history")
        assert [json.loads(line) for line in lines[:2]] == as_json[-2:]
    finally:
        attach.terminate()
        attach.wait(10)


def test_trash_commands_in_table_form(paseo: Run, workdir: Path) -> None:
    agent = paseo(
        "run", "-q", "--provider", "scripted", "--cwd", str(workdir), "--title", "binned", "hi"
    ).stdout.strip()
    assert paseo("trash", "ls", check=True).stdout == (
        "the trash is empty (deleted agents stay 30 days)\n"
    )
    paseo("delete", "binned", check=True)
    table = paseo("trash", "ls", check=True).stdout.splitlines()
    assert table[0].split() == ["ID", "TITLE", "PROVIDER", "CWD", "DELETED", "PURGE", "AFTER"]
    assert table[1].startswith(f"{agent[:8]}  binned  scripted  {workdir}")
    assert paseo("trash", "ls", "-q", check=True).stdout == f"{agent}\n"
    restored = paseo("trash", "restore", "binned", check=True).stdout
    assert restored == f"restored {agent[:8]}: `paseo send {agent[:8]} ...` resumes it\n"
    assert paseo("ls", "-q", check=True).stdout == f"{agent}\n"
    paseo("delete", agent, check=True)
    refused = paseo("trash", "empty")
    assert refused.returncode == 2
    assert "every agent in the trash for good" in refused.stderr
    assert paseo("trash", "ls", "-q", check=True).stdout == f"{agent}\n"
    emptied = paseo("trash", "empty", "--yes", check=True)
    assert emptied.stdout == "removed 1 agent(s) for good\n"
    assert paseo("trash", "ls", "-q", check=True).stdout == ""
    missing = paseo("trash", "restore", agent)
    assert missing.returncode == 1
    assert "paseo trash ls" in missing.stderr


def test_ctrl_c_during_run_says_the_agent_goes_on_and_how_to_stop_it(
    agent_daemon: LiveDaemon, client: Any, workdir: Path
) -> None:
    """Issue 27, item 7: Ctrl-C during `paseo run` once exited silently while the agent went on."""
    import signal

    argv = ["run", "--provider", "scripted", "--cwd", str(workdir), "[[slow:60]]"]
    process = subprocess.Popen(
        [sys.executable, "-m", "paseo", *argv],
        env={**os.environ, "PASEO_HOME": str(agent_daemon.home)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The command follows its agent's events once the agent is created: then it waits.
        wait_for(lambda: client.status().counts.subscriptions >= 1, what="run waiting")
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    [agent] = client.call("agent.list", {})["agents"]
    short = agent["id"][:8]
    assert f"agent {short} goes on working" in err
    assert f"`paseo stop {short}`" in err
    assert "Traceback" not in err
    assert agent["lastStatus"] == "running"
    client.call("agent.stop", {"agentId": agent["id"]})
