"""Agent processes, restarts and failures, through the real daemon."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
from helpers.daemon_rpc import LiveDaemon, stop_daemon
from helpers.waiting import wait_for

from paseo.client import SyncClient


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait(client: Any, agent_id: str, timeout: float = 20) -> dict[str, Any]:
    result: dict[str, Any] = client.call(
        "agent.wait", {"agentId": agent_id, "timeout": timeout}, timeout=timeout + 10
    )
    return result


def _pids(client: Any, agent_id: str) -> tuple[int, int]:
    """The agent program's pid and the pid of a child it starts in its process group."""
    client.call("agent.send", {"agentId": agent_id, "text": "[[pid]]"})
    program = int(_wait(client, agent_id)["lastMessage"].split("=")[1])
    client.call("agent.send", {"agentId": agent_id, "text": "[[sleeper]]"})
    sleeper = int(_wait(client, agent_id)["lastMessage"].split("=")[1])
    assert not _gone(program)
    assert not _gone(sleeper)
    return program, sleeper


def _remembering_agent(client: Any, workdir: Path) -> str:
    """A scripted agent that has finished its first turn."""
    agent_id: str = client.call(
        "agent.create",
        {"provider": "scripted", "cwd": str(workdir), "initialPrompt": "remember alpha"},
    )["agent"]["id"]
    assert _wait(client, agent_id)["outcome"] == "idle"
    return agent_id


def _tail_types(client: Any, agent_id: str, count: int) -> list[str]:
    page = client.call("agent.timeline", {"agentId": agent_id, "limit": count, "tail": True})
    return [entry["event"]["type"] for entry in page["entries"]]


def _start_slow_turn(client: Any, agent_id: str) -> None:
    """Send a minute-long prompt; return once the timeline shows its turn started."""
    client.call("agent.send", {"agentId": agent_id, "text": "[[slow:60]] busy"})
    wait_for(lambda: _tail_types(client, agent_id, 1) == ["turn_started"], what="the slow turn")


def _kill(daemon: LiveDaemon) -> None:
    os.kill(daemon.pid, signal.SIGKILL)
    wait_for(lambda: _gone(daemon.pid), what="the daemon to die")


def _records(home: Path) -> list[str]:
    directory = home / "runtime" / "managed-processes"
    return sorted(p.name for p in directory.glob("*.json")) if directory.exists() else []


def test_no_process_survives_stop_archive_delete_or_shutdown(
    agent_daemon: LiveDaemon, client: Any, workdir: Path
) -> None:
    agents = [
        client.call("agent.create", {"provider": "scripted", "cwd": str(workdir)})["agent"]["id"]
        for _ in range(4)
    ]
    pids = {agent_id: _pids(client, agent_id) for agent_id in agents}
    env_of = psutil.Process(pids[agents[0]][0]).environ()
    assert env_of["PASEO_AGENT_ID"] == agents[0]
    assert len(_records(agent_daemon.home)) == 4
    for method, agent_id in zip(
        ("agent.stop", "agent.archive", "agent.delete"), agents, strict=False
    ):
        client.call(method, {"agentId": agent_id})
        assert all(_gone(pid) for pid in pids[agent_id]), method
    assert len(_records(agent_daemon.home)) == 1
    client.close()
    stop_daemon(agent_daemon.home)
    assert all(_gone(pid) for pid in pids[agents[3]])
    assert _records(agent_daemon.home) == []


def test_daemon_crash_restart_closed_with_history_then_resume_continues_the_sequence(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    daemon = agent_daemon_factory()
    with SyncClient(home=daemon.home) as client:
        agent = _remembering_agent(client, workdir)
        program, sleeper = _pids(client, agent)
        _start_slow_turn(client, agent)
        before = client.call("agent.timeline", {"agentId": agent, "limit": 1000})
    _kill(daemon)
    # The program saw its stdin close; the child it started is orphaned until the next boot.
    wait_for(lambda: _gone(program), what="the agent program to exit")
    assert not _gone(sleeper)
    assert _records(daemon.home)

    restarted = agent_daemon_factory()
    assert _gone(sleeper), "boot reaps the orphaned process group"
    assert _records(restarted.home) == []
    with SyncClient(home=restarted.home) as client:
        record = client.call("agent.get", {"agentId": agent})["agent"]
        assert record["lastStatus"] == "closed"
        after = client.call("agent.timeline", {"agentId": agent, "limit": 1000})
        assert after["epoch"] == before["epoch"]
        assert after["entries"][: len(before["entries"])] == before["entries"]
        ended = after["entries"][len(before["entries"])]
        assert ended["event"] == {
            "type": "turn_canceled",
            "provider": "scripted",
            "reason": "daemon_restarted",
        }
        last_seq = after["entries"][-1]["seq"]
        client.call("agent.send", {"agentId": agent, "text": "[[history]]"})
        result = _wait(client, agent)
        assert result["lastMessage"] == (
            "remember alpha | [[pid]] | [[sleeper]] | [[slow:60]] busy | [[history]]"
        )
        resumed = client.call(
            "agent.timeline",
            {"agentId": agent, "after": {"epoch": after["epoch"], "seq": last_seq}},
        )["entries"]
        assert resumed[0]["seq"] == last_seq + 1
        assert resumed[0]["event"]["item"]["text"] == "[[history]]"
        assert (
            client.call("agent.get", {"agentId": agent})["agent"]["persistence"]["sessionId"]
            == record["persistence"]["sessionId"]
        )


def test_five_agents_run_concurrently(client: Any, workdir: Path) -> None:
    agents = [
        client.call(
            "agent.create",
            {
                "provider": "scripted",
                "cwd": str(workdir),
                "title": f"worker {n}",
                "initialPrompt": f"[[slow:1]] job {n}",
            },
        )["agent"]["id"]
        for n in range(5)
    ]
    wait_for(
        lambda: (
            sum(a["lastStatus"] == "running" for a in client.call("agent.list", {})["agents"]) == 5
        ),
        what="five running agents",
    )
    replies = [_wait(client, agent)["lastMessage"] for agent in agents]
    assert replies == [f"echo: [[slow:1]] job {n}" for n in range(5)]


def test_failures_end_in_error_and_the_daemon_carries_on(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    daemon = agent_daemon_factory(env={"PASEO_AGENT_START_TIMEOUT": "1.5"})
    with SyncClient(home=daemon.home) as client:
        healthy = client.call(
            "agent.create", {"provider": "scripted", "cwd": str(workdir), "initialPrompt": "a"}
        )["agent"]["id"]
        expected = {
            "hang": "did not start within 2s",
            "crash": "exited during start-up (code 3): fatal",
            "missing": "is not installed",
            "reject": "not supported by the scripted agent (HTTP 400",
        }
        created = {
            model: client.call(
                "agent.create",
                {"provider": f"scripted/{model}", "cwd": str(workdir), "initialPrompt": "hi"},
            )["agent"]["id"]
            for model in expected
        }
        for model, agent in created.items():
            result = _wait(client, agent)
            assert result["outcome"] == "error", model
            assert expected[model] in result["error"], (model, result["error"])
            record = client.call("agent.get", {"agentId": agent})["agent"]
            assert record["lastStatus"] == "error"
            assert record["attentionReason"] == "error"
        # The program that crashed mid-turn: the error carries its stderr.
        client.call("agent.send", {"agentId": healthy, "text": "[[exit]]"})
        crashed = _wait(client, healthy)
        assert crashed["outcome"] == "error"
        assert "exited with code 5" in crashed["error"]
        assert "boom" in crashed["error"]
        # ... and the next prompt starts it again, resuming the conversation.
        client.call("agent.send", {"agentId": healthy, "text": "again"})
        assert _wait(client, healthy)["lastMessage"] == "echo: again"
        # Failed start-ups left nothing running: only agents with a session have a process.
        live = [
            agent
            for agent in [healthy, *created.values()]
            if client.call("agent.get", {"agentId": agent})["live"]
        ]
        assert sorted(live) == sorted([healthy, created["reject"]])
        assert len(_records(daemon.home)) == len(live)


def _set_record_status(home: Path, agent_id: str, status: str) -> None:
    """Make the agent file say ``status``, as a kill inside the record's write-behind window
    (derived status is written moments after the timeline entries it follows from) can."""
    (path,) = home.glob(f"agents/*/{agent_id}.json")
    data = json.loads(path.read_text())
    data["lastStatus"] = status
    path.write_text(json.dumps(data, indent=2) + "\n")


def test_restart_closes_a_turn_the_timeline_shows_open_whatever_the_record_says(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    daemon = agent_daemon_factory()
    with SyncClient(home=daemon.home) as client:
        agent = _remembering_agent(client, workdir)
        _start_slow_turn(client, agent)
    _kill(daemon)
    _set_record_status(daemon.home, agent, "idle")

    restarted = agent_daemon_factory()
    with SyncClient(home=restarted.home) as client:
        assert client.call("agent.get", {"agentId": agent})["agent"]["lastStatus"] == "closed"
        assert _tail_types(client, agent, 1) == ["turn_canceled"]


def test_restart_adds_nothing_to_a_finished_turn_whatever_the_record_says(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path
) -> None:
    daemon = agent_daemon_factory()
    with SyncClient(home=daemon.home) as client:
        agent = _remembering_agent(client, workdir)
        before = _tail_types(client, agent, 3)
    _kill(daemon)
    _set_record_status(daemon.home, agent, "running")

    restarted = agent_daemon_factory()
    with SyncClient(home=restarted.home) as client:
        assert client.call("agent.get", {"agentId": agent})["agent"]["lastStatus"] == "closed"
        assert _tail_types(client, agent, 3) == before
        assert "turn_canceled" not in before


def test_after_a_stop_with_a_pending_permission_ls_and_permit_ls_agree(
    agent_daemon_factory: Callable[..., LiveDaemon], workdir: Path, run_paseo
) -> None:
    live = agent_daemon_factory()
    env = {"PASEO_HOME": str(live.home)}
    with SyncClient(home=live.home) as client:
        agent = client.call(
            "agent.create",
            {"provider": "scripted", "cwd": str(workdir), "initialPrompt": "[[write:a.txt:x]]"},
        )["agent"]
        waited = client.call("agent.wait", {"agentId": agent["id"], "timeout": 20}, timeout=30)
        assert waited["outcome"] == "permission"
    listed = json.loads(run_paseo("ls", "-o", "json", env=env, check=True).stdout)
    assert [row["attentionReason"] for row in listed] == ["permission"]
    stop_daemon(live.home)

    restarted = agent_daemon_factory()
    assert restarted.home == live.home
    rows = json.loads(run_paseo("ls", "-o", "json", env=env, check=True).stdout)
    permits = json.loads(run_paseo("permit", "ls", "-o", "json", env=env, check=True).stdout)
    assert permits == []
    assert [(row["id"], row["requiresAttention"], row["attentionReason"]) for row in rows] == [
        (agent["id"], False, None)
    ]
