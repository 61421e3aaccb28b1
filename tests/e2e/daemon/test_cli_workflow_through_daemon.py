"""``paseo run --output-schema`` and ``paseo import`` with the real programs through the real
daemon and CLI, against the fake model server; and the timeline refill after a resume.

- ``--output-schema``: Claude Code first answers a number below the schema's minimum; the CLI
  says what is wrong, the correction prompt carries the schema, whose description scripts the
  fake's second answer, which validates.
- ``import``: a conversation made directly with ``claude -p`` (and one with ``codex exec``) is
  adopted with its history and continued; a turn taken outside Paseo (``claude -p --resume``)
  appears after the next resume, and nothing is ever listed twice.
- The Python ACP agent (no model): a resume replays the conversation through ``session/load``
  without duplicating it; its session imported anew shows the whole history; an unknown session
  is refused and leaves no agent; a reply that never matches ``--output-schema`` ends after three.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from e2e.daemon.harness import TURN_TIMEOUT, RealDaemon, provider_settings
from paseo_hookspecs.records import TimelineEntry

from paseo.agents.refill import recorded
from paseo.testing.fake_model import FakeModelServer

pytestmark = pytest.mark.e2e

WAIT = f"{TURN_TIMEOUT:.0f}s"


def messages(daemon: RealDaemon, agent: str) -> list[tuple[str, str]]:
    """The agent's messages as ``paseo logs -o json`` shows them (reply chunks joined)."""
    out = daemon.cli("logs", agent, "-o", "json").stdout
    entries = [TimelineEntry.model_validate(json.loads(line)) for line in out.splitlines() if line]
    return [(role, text.strip()) for role, text in recorded(entries)]


def direct(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    """Run an agent program on its own (not through Paseo); its stdout."""
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TURN_TIMEOUT * 2,
        check=False,
    )
    assert done.returncode == 0, f"{argv[0]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def model_bodies(fake: FakeModelServer) -> list[str]:
    return [request.body.decode("utf-8", "replace") for request in fake.model_requests()]


def carried(fake: FakeModelServer, marker: str, earlier: str) -> bool:
    """Whether the model request for the prompt holding ``marker`` carried ``earlier``."""
    return any(
        earlier in request.body.decode("utf-8", "replace")
        for request in fake.model_requests()
        if marker in request.prompt
    )


def test_output_schema_asks_again_until_the_reply_validates(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path, workdir: Path
) -> None:
    daemon.configure({"claude": provider_settings("claude", fake, tmp_path / "programs")})
    daemon.start()
    schema = {"type": "integer", "minimum": 40, "description": "[[reply:42]]"}
    detached = daemon.cli("run", "-d", "--output-schema", json.dumps(schema), "x", check=False)
    assert detached.returncode == 2
    assert "cannot be used with -d" in detached.stderr

    ran = daemon.cli(
        "run",
        "--provider",
        "claude",
        "--cwd",
        str(workdir),
        "--wait-timeout",
        WAIT,
        "--output-schema",
        json.dumps(schema),
        "-o",
        "json",
        "schema-marker pick a number [[reply:7]]",
    )
    result: dict[str, Any] = json.loads(ran.stdout)
    assert (result["output"], result["attempts"], result["outcome"]) == (42, 2, "idle")
    said = messages(daemon, result["agentId"])
    assert [role for role, _ in said] == ["user", "assistant", "user", "assistant"]
    assert said[1] == ("assistant", "7")
    assert "7 is less than the minimum of 40" in said[2][1]
    assert said[3] == ("assistant", "42")


def test_import_a_claude_session_with_its_history_and_refill_after_resume(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path, workdir: Path
) -> None:
    settings = provider_settings("claude", fake, tmp_path / "programs")
    claude, env = settings["command"][0], settings["env"]
    first = "import-marker [[reply:imported answer]]"
    started = json.loads(direct([claude, "-p", first, "--output-format", "json"], env, workdir))
    session = started["session_id"]
    daemon.configure({"claude": settings})
    daemon.start()

    imported = json.loads(
        daemon.cli(
            "import",
            session,
            "--provider",
            "claude",
            "--cwd",
            str(workdir),
            "--title",
            "adopted",
            "-o",
            "json",
        ).stdout
    )
    assert imported["persistence"]["sessionId"] == session
    assert imported["lastStatus"] == "idle"
    assert messages(daemon, "adopted") == [("user", first), ("assistant", "imported answer")]
    twice = daemon.cli(
        "import", session, "--provider", "claude", "--cwd", str(workdir), check=False
    )
    assert twice.returncode == 1
    assert "already holds" in twice.stderr

    # The conversation goes on in Paseo: the model hears the imported turn.
    second = daemon.cli("send", "adopted", "--wait-timeout", WAIT, "second-marker [[reply:two]]")
    assert second.stdout == "two\n"
    assert carried(fake, "second-marker", "import-marker")

    # A turn outside Paseo while the agent is stopped shows up after the next resume.
    daemon.cli("stop", "adopted")
    outside = "outside-marker [[reply:from outside]]"
    direct([claude, "-p", "--resume", session, outside, "--output-format", "json"], env, workdir)
    third = daemon.cli("send", "adopted", "--wait-timeout", WAIT, "third-marker [[reply:three]]")
    assert third.stdout == "three\n"
    said = messages(daemon, "adopted")
    assert Counter(said) == Counter(
        {
            ("user", first): 1,
            ("assistant", "imported answer"): 1,
            ("user", "second-marker [[reply:two]]"): 1,
            ("assistant", "two"): 1,
            ("user", "third-marker [[reply:three]]"): 1,
            ("user", outside): 1,
            ("assistant", "from outside"): 1,
            ("assistant", "three"): 1,
        }
    ), said
    # Refilled at the resume: after what Paseo had, before the reply to the new prompt.
    assert said.index(("user", outside)) > said.index(("assistant", "two"))
    assert said[-1] == ("assistant", "three")


def test_import_a_codex_thread_with_its_history(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path, workdir: Path
) -> None:
    settings = provider_settings("codex", fake, tmp_path / "programs")
    codex, env = settings["command"][0], settings["env"]
    first = "codex-import-marker [[reply:codex answer]]"
    out = direct([codex, "exec", "--json", "--skip-git-repo-check", first], env, workdir)
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    thread = next(e["thread_id"] for e in events if e.get("type") == "thread.started")
    daemon.configure({"codex": settings})
    daemon.start()

    agent = json.loads(
        daemon.cli(
            "import", thread, "--provider", "codex", "--cwd", str(workdir), "-o", "json"
        ).stdout
    )["id"]
    assert messages(daemon, agent) == [("user", first), ("assistant", "codex answer")]
    again = daemon.cli("send", agent, "--wait-timeout", WAIT, "codex-second [[reply:more]]")
    assert again.stdout == "more\n"
    assert carried(fake, "codex-second", "codex-import-marker")
    assert messages(daemon, agent)[2:] == [
        ("user", "codex-second [[reply:more]]"),
        ("assistant", "more"),
    ]


def test_acp_resume_does_not_duplicate_and_its_session_imports(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path, workdir: Path
) -> None:
    daemon.configure({"py-acp": provider_settings("py-acp", fake, tmp_path / "programs")})
    daemon.start()
    agent = daemon.cli(
        "run", "-q", "--provider", "py-acp", "--cwd", str(workdir), "acp-first [[reply:one]]"
    ).stdout.strip()
    daemon.cli("stop", agent)
    # The resume loads the session; its replay holds what the timeline has: nothing is added.
    daemon.cli("send", agent, "--wait-timeout", WAIT, "acp-second [[reply:two]]")
    conversation = [
        ("user", "acp-first [[reply:one]]"),
        ("assistant", "one"),
        ("user", "acp-second [[reply:two]]"),
        ("assistant", "two"),
    ]
    assert messages(daemon, agent) == conversation
    record = json.loads(daemon.cli("inspect", agent, "-o", "json").stdout)["agent"]
    session = record["persistence"]["sessionId"]

    daemon.cli("delete", agent)
    adopted = daemon.cli(
        "import", session, "--provider", "py-acp", "--cwd", str(workdir), "-q"
    ).stdout.strip()
    assert messages(daemon, adopted) == conversation

    unknown = daemon.cli(
        "import", "no-such-session", "--provider", "py-acp", "--cwd", str(workdir), check=False
    )
    assert unknown.returncode == 1
    assert "could not resume conversation no-such-session" in unknown.stderr
    assert daemon.cli("ls", "-a", "-q").stdout.split() == [adopted]

    # A reply that never validates: three replies asked for, then exit 8 saying why.
    schema = json.dumps({"type": "object", "required": ["answer"]})
    never = daemon.cli(
        "run",
        "--provider",
        "py-acp",
        "--cwd",
        str(workdir),
        "--output-schema",
        schema,
        "--title",
        "stubborn",
        "anything",
        check=False,
    )
    assert never.returncode == 8, never.stderr
    assert "no reply matched the schema in 3 attempts" in never.stderr
    assert never.stderr.count("does not match the schema") == 2
    said = messages(daemon, "stubborn")
    assert [role for role, _ in said] == ["user", "assistant"] * 3


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
"""A one-pixel PNG."""


def test_images_reach_the_model_or_are_refused_clearly(
    daemon: RealDaemon, fake: FakeModelServer, tmp_path: Path, workdir: Path
) -> None:
    programs = tmp_path / "programs"
    daemon.configure(
        {name: provider_settings(name, fake, programs) for name in ("claude", "codex", "py-acp")}
    )
    daemon.start()
    image = workdir / "dot.png"
    image.write_bytes(PNG)
    encoded = base64.b64encode(PNG).decode()
    for provider in ("claude", "codex"):
        marker = f"{provider}-image-marker"
        ran = daemon.cli(
            "run",
            "--provider",
            provider,
            "--cwd",
            str(workdir),
            "--wait-timeout",
            WAIT,
            "--image",
            str(image),
            f"{marker} [[reply:seen]]",
        )
        assert ran.returncode == 0
        # Programs may add their own text after the image (Claude Code names the file it kept):
        # the request is found by the prompt's marker anywhere in it.
        bodies = [body for body in model_bodies(fake) if marker in body]
        assert bodies, f"{provider}: no model request for the prompt"
        assert any(encoded in body for body in bodies), f"{provider}: the image did not arrive"

    refused = daemon.cli(
        "run",
        "--provider",
        "py-acp",
        "--cwd",
        str(workdir),
        "--image",
        str(image),
        "x",
        check=False,
    )
    assert refused.returncode == 5
    assert "does not take images" in refused.stderr
    not_an_image = daemon.cli("run", "--image", str(workdir), "x", check=False)
    assert not_an_image.returncode == 2
