"""The scripted agent program: JSON lines on stdin/stdout, behaviour chosen by the prompt.

Start-up: ``--model hang`` never becomes ready; ``--model crash`` exits at once with a message
on stderr; otherwise it prints ``{"type": "ready", "sessionId": ...}``. ``--resume ID`` reloads
the prompts of an earlier session from ``.scripted-sessions/ID.json`` under its cwd, so a
resumed conversation remembers what was said.

Prompt directives (the rest of the text is echoed as ``echo: <text>``):

``[[chunks:N]]``         reply in N quick text chunks (``c0 c1 ...``)
``[[events:N]]``         reply with N one-word messages (N timeline entries, nothing merges)
``[[slow:S]]``           wait S seconds first (an interrupt cancels the turn)
``[[write:NAME:TEXT]]``  ask permission to write file NAME; allowed: write TEXT (or the edited
                         ``content``) and reply ``wrote NAME``; denied: ``not written: <why>``
``[[fail:MSG]]``         fail the turn with MSG
``[[usage:IN:OUT:COST]]`` report these input/output tokens and USD cost when the turn ends
                         (completed or interrupted); ``-`` leaves a part unreported
``[[steps:N:IN:OUT]]``   N steps, each a reply ``step K`` then a mid-turn usage report of the
                         turn so far (K*IN input, K*OUT output tokens), then up to 5 s of
                         waiting (an interrupt ends the turn there, reporting the usage so far)
``[[exit]]``             exit mid-turn (code 5) after writing ``boom`` to stderr
``[[pid]]``              reply ``pid=<own pid>``
``[[sleeper]]``          start a child ``sleep`` in the process group; reply ``sleeper=<pid>``
``[[history]]``          reply with every prompt of this session joined by `` | ``
``[[mcp:TOOL {json}]]``  call TOOL on the injected Paseo MCP server (``PASEO_SCRIPTED_MCP_URL``,
                         from ``mcpServers.paseo``) as an MCP client would; reply
                         ``mcp: <the tool's text>`` (``mcp: none`` when nothing was injected)

``--model reject`` fails every turn as a model the agent does not support would.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

_messages: queue.Queue[dict[str, Any] | None] = queue.Queue()


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _read_stdin() -> None:
    for raw in sys.stdin:
        if line := raw.strip():
            _messages.put(json.loads(line))
    _messages.put(None)


class Interrupted(Exception):
    """A client interrupted the turn."""


class Ended(Exception):
    """The turn already reported how it ended."""


def _usage(text: str) -> dict[str, Any]:
    """``{"usage": {...}}`` for a ``[[usage:IN:OUT:COST]]`` directive, else nothing."""
    match = re.search(r"\[\[usage:([^:\]]*):([^:\]]*):([^:\]]*)\]\]", text)
    if match is None:
        return {}
    given, out, cost = match.groups()
    usage: dict[str, Any] = {}
    if given != "-":
        usage["inputTokens"] = int(given)
    if out != "-":
        usage["outputTokens"] = int(out)
    if cost != "-":
        usage["costUsd"] = float(cost)
    return {"usage": usage}


class Agent:
    def __init__(self, session_id: str, store: Path, model: str) -> None:
        self.session_id = session_id
        self.store = store
        self.model = model
        self.turn = 0
        path = store / f"{session_id}.json"
        self.history: list[str] = json.loads(path.read_text()) if path.exists() else []

    def save(self) -> None:
        self.store.mkdir(parents=True, exist_ok=True)
        (self.store / f"{self.session_id}.json").write_text(json.dumps(self.history))

    def wait_for(self, kind: str, seconds: float) -> dict[str, Any] | None:
        """The next message of ``kind`` within ``seconds``; an interrupt raises."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                message = _messages.get(timeout=remaining)
            except queue.Empty:
                return None
            if message is None:
                sys.exit(0)
            if message.get("type") == "interrupt":
                raise Interrupted
            if message.get("type") == kind:
                return message

    def reply(self, text: str, chunks: int = 1) -> None:
        message_id = f"m{self.turn}-{uuid.uuid4().hex[:6]}"
        if chunks <= 1:
            send({"type": "text", "text": text, "messageId": message_id})
            return
        for index in range(chunks):
            piece = f"c{index}" + (" " if index < chunks - 1 else "")
            send({"type": "text", "text": piece, "messageId": message_id})

    def run_turn(self, text: str) -> None:
        self.turn += 1
        self.history.append(text)
        self.save()
        send({"type": "turn_started"})
        if self.model == "reject":
            send(
                {
                    "type": "failed",
                    "error": "model 'reject' is not supported by the scripted agent "
                    "(HTTP 400 from the model API); choose another model",
                }
            )
            return
        usage = _usage(text)
        self.turn_usage: dict[str, Any] = {}
        try:
            self._directives(text)
        except Interrupted:
            send({"type": "canceled", **(usage or self._so_far())})
            return
        except Ended:
            return
        send({"type": "done", **(usage or self._so_far())})

    def _so_far(self) -> dict[str, Any]:
        return {"usage": self.turn_usage} if self.turn_usage else {}

    def _steps(self, count: int, given: int, out: int) -> None:
        for step in range(1, count + 1):
            send({"type": "text", "text": f"step {step}", "messageId": f"m{self.turn}-s{step}"})
            self.turn_usage = {"inputTokens": given * step, "outputTokens": out * step}
            send({"type": "usage", "usage": self.turn_usage})
            self.wait_for("never", 5.0)

    def _directives(self, text: str) -> None:
        slow = re.search(r"\[\[slow:([\d.]+)\]\]", text)
        if slow:
            self.wait_for("never", float(slow.group(1)))
        if match := re.search(r"\[\[fail:([^\]]*)\]\]", text):
            send({"type": "failed", "error": match.group(1)})
            raise Ended
        if match := re.search(r"\[\[steps:(\d+):(\d+):(\d+)\]\]", text):
            self._steps(int(match.group(1)), int(match.group(2)), int(match.group(3)))
            return
        if "[[exit]]" in text:
            sys.stderr.write("boom: the scripted agent crashed\n")
            sys.stderr.flush()
            os._exit(5)
        if match := re.search(r"\[\[write:([^:\]]+):([^\]]*)\]\]", text):
            self._write(match.group(1), match.group(2))
            return
        if match := re.search(r"\[\[events:(\d+)\]\]", text):
            for index in range(int(match.group(1))):
                send({"type": "text", "text": f"e{index}", "messageId": f"m{self.turn}-{index}"})
            return
        if match := re.search(r"\[\[chunks:(\d+)\]\]", text):
            self.reply("", chunks=int(match.group(1)))
            return
        if "[[pid]]" in text:
            self.reply(f"pid={os.getpid()}")
            return
        if "[[sleeper]]" in text:
            child = subprocess.Popen(
                ["sleep", "600"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            self.reply(f"sleeper={child.pid}")
            return
        if "[[history]]" in text:
            self.reply(" | ".join(self.history))
            return
        if match := re.search(r"\[\[mcp:(\w+) (\{.*\})\]\]", text, re.S):
            self.reply(f"mcp: {_mcp_call(match.group(1), json.loads(match.group(2)))}")
            return
        self.reply(f"echo: {text}")

    def _write(self, name: str, content: str) -> None:
        request_id = uuid.uuid4().hex[:8]
        call_id = f"call-{request_id}"
        path = str(Path.cwd() / name)
        send({"type": "tool", "callId": call_id, "status": "running", "path": path})
        send(
            {
                "type": "permission",
                "id": request_id,
                "title": f"Write {name}",
                "path": path,
                "content": content,
            }
        )
        answer = self.wait_for("permission", 3600)
        if answer is not None and answer.get("interrupt"):
            send({"type": "tool", "callId": call_id, "status": "canceled", "path": path})
            raise Interrupted
        if answer is None or not answer.get("allow"):
            why = (answer or {}).get("message") or "denied"
            send({"type": "tool", "callId": call_id, "status": "failed", "path": path})
            self.reply(f"not written: {why}")
            return
        Path(path).write_text(str(answer.get("content") or content))
        send({"type": "tool", "callId": call_id, "status": "completed", "path": path})
        self.reply(f"wrote {name}")


def _mcp_call(tool: str, arguments: dict[str, Any]) -> str:
    """One streamable-HTTP MCP exchange per message (initialize, then tools/call), as an
    agent program's MCP client makes them."""
    url = os.environ.get("PASEO_SCRIPTED_MCP_URL")
    if not url:
        return "none"
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }

    def post(message: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            answer: dict[str, Any] = json.loads(response.read() or b"{}")
            return answer

    init = post(
        {
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "scripted", "version": "1"},
            },
        }
    )
    headers["MCP-Protocol-Version"] = init["result"]["protocolVersion"]
    called = post(
        {"id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    text: str = called["result"]["content"][0]["text"]
    return text


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="default")
    parser.add_argument("--resume")
    args = parser.parse_args()
    if args.model == "crash":
        sys.stderr.write("fatal: the scripted agent cannot start with model 'crash'\n")
        return 3
    if args.model == "hang":
        time.sleep(3600)
        return 0
    threading.Thread(target=_read_stdin, daemon=True).start()
    agent = Agent(args.resume or uuid.uuid4().hex, Path.cwd() / ".scripted-sessions", args.model)
    send({"type": "ready", "sessionId": agent.session_id, "history": len(agent.history)})
    while True:
        message = _messages.get()
        if message is None:
            return 0
        if message.get("type") == "prompt":
            with contextlib.suppress(Interrupted):
                agent.run_turn(str(message.get("text") or ""))


if __name__ == "__main__":
    sys.exit(main())
