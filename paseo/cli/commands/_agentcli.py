"""What the agent commands share: the connection, waiting, durations, and readable events.

Agents are named by full id, unique id prefix or title; the daemon resolves the name, so every
command passes it through unchanged.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from paseo.cli.errors import EXIT_USAGE, CliError

LISTING_WAIT = 120.0
"""Seconds to wait for ``agent.modes`` / ``provider.models``: the daemon bounds a listing at
90 s (``paseo.agents.registry.LISTING_TIMEOUT``), so its answer, even a timeout error, arrives
first."""

if TYPE_CHECKING:
    import queue

    from paseo.client.light import LightClient
    from paseo.client.sync import SyncClient

EXIT_PERMISSION = 4
"""The agent waits for a permission answer."""
EXIT_AGENT_ERROR = 5
"""The agent's turn failed (status ``error``)."""
EXIT_TIMEOUT = 6
"""The agent was still working when the wait timed out."""
EXIT_CLOSED = 7
"""The agent was stopped, archived or deleted while waiting."""

OUTCOME_EXIT = {
    "idle": 0,
    "permission": EXIT_PERMISSION,
    "error": EXIT_AGENT_ERROR,
    "timeout": EXIT_TIMEOUT,
    "closed": EXIT_CLOSED,
}

WAIT_SLICE = 60.0
"""Longest single ``agent.wait`` call; longer waits repeat it."""

HISTORY_PAGE = 500
"""Timeline entries fetched per call when reading history."""

EXIT_CODES_HELP = (
    "exit status: 0 idle, 4 waiting for a permission, 5 error, 6 timed out, 7 stopped/closed"
)


def add_host(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", help="daemon address (default: this home's daemon)")


RECONNECTS = 12
"""Attempts a following command makes after losing the daemon (backoff 0.1 s doubling to 10 s:
about a minute, enough for ``paseo daemon restart``) before it gives up."""


def say_reconnecting(attempt: int, limit: int | None) -> None:
    """The line a following command writes on stderr while it gets its daemon back."""
    if attempt == 1:
        sys.stderr.write(
            f"paseo: lost the connection to the daemon; reconnecting (up to {limit} tries)\n"
        )
    elif attempt == 0:
        sys.stderr.write("paseo: reconnected to the daemon\n")
    sys.stderr.flush()


def connect(args: argparse.Namespace, *, follow: bool = False) -> SyncClient:
    """A client of the daemon of ``--home`` (or ``--host``); raises when it is not running.

    ``follow``: a command that streams until the user stops it (``attach``, ``logs -f``)
    reconnects by itself when the daemon goes away (a restart), a bounded number of times,
    saying so on stderr; its subscriptions come back and it resumes after the last entry
    it showed (:class:`Follower`)."""
    from paseo.cli.context import home_layout
    from paseo.client.sync import SyncClient

    if follow:
        return SyncClient(
            getattr(args, "host", None),
            home=home_layout(args).root,
            client_type="cli",
            reconnect=True,
            max_reconnects=RECONNECTS,
            on_reconnecting=say_reconnecting,
        )
    return SyncClient(
        getattr(args, "host", None),
        home=home_layout(args).root,
        client_type="cli",
        reconnect=False,
    )


def connect_light(args: argparse.Namespace) -> LightClient:
    """:func:`connect` for commands that only make calls (no notifications): imports neither
    asyncio nor pydantic (see :mod:`paseo.client.light`), nor the home package: the home is
    only a path here (:func:`paseo.client.discovery.home_path`, as ``home_layout``'s root)."""
    from paseo.client.discovery import home_path
    from paseo.client.light import LightClient

    return LightClient(getattr(args, "host", None), home=home_path(getattr(args, "home", None)))


def parse_duration(text: str) -> float:
    """``90``, ``90s``, ``5m``, ``1h``, ``1h30m`` → seconds."""
    value = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", value)
    if not parts or "".join(n + u for n, u in parts) != value:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30s, 5m, 1h)")
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0}
    return sum(float(number) * scale[unit] for number, unit in parts)


def parse_labels(pairs: list[str] | None) -> dict[str, str]:
    labels: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--label wants KEY=VALUE, got {pair!r}", exit_code=EXIT_USAGE)
        labels[key] = value
    return labels


def wait_agent(client: SyncClient, agent_id: str, timeout: float | None) -> dict[str, Any]:
    """Wait (in slices) until the agent is idle, needs permission, fails, or ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        remaining = WAIT_SLICE if deadline is None else max(0.0, deadline - time.monotonic())
        slice_ = min(WAIT_SLICE, remaining)
        result: dict[str, Any] = client.call(
            "agent.wait", {"agentId": agent_id, "timeout": slice_}, timeout=slice_ + 30
        )
        if result["outcome"] != "timeout":
            return result
        if deadline is not None and time.monotonic() >= deadline:
            return result


EXIT_INTERRUPTED = 130
"""Ctrl-C, as a shell reports a process ended by SIGINT."""


def interrupted(agent_id: str) -> CliError:
    """The error for Ctrl-C while waiting on an agent: the agent is the daemon's, it goes on
    (a silent exit left users believing it had stopped)."""
    agent = short(agent_id)
    return CliError(
        f"interrupted: agent {agent} goes on working in the daemon; follow it with "
        f"`paseo attach {agent}`, stop it with `paseo stop {agent}`",
        exit_code=EXIT_INTERRUPTED,
    )


def short(agent_id: str) -> str:
    return agent_id[:8]


def report_outcome(args: argparse.Namespace, result: dict[str, Any], *, reply: bool) -> int:
    """Print how a wait ended (and the reply when ``reply``); returns the exit status."""
    from paseo.cli.output import emit

    outcome = str(result["outcome"])
    code = OUTCOME_EXIT.get(outcome, 1)
    if args.output != "table":
        emit(args, result, id_key="agentId")
        return code
    if args.quiet:
        sys.stdout.write(f"{result['agentId']}\n")
        return code
    message = result.get("lastMessage")
    if reply and message and outcome in ("idle", "permission", "error"):
        sys.stdout.write(message if message.endswith("\n") else message + "\n")
    agent = short(str(result["agentId"]))
    if outcome == "idle":
        sys.stderr.write(f"paseo: agent {agent} finished (idle)\n")
    elif outcome == "permission":
        for pending in result.get("pendingPermissions") or []:
            sys.stderr.write(
                f"paseo: agent {agent} waits for permission: {pending.get('title')} "
                f"— `paseo permit allow {agent} {pending.get('id')}` or `paseo permit deny ...`\n"
            )
    elif outcome == "error":
        sys.stderr.write(f"paseo: agent {agent} failed: {result.get('error') or 'unknown error'}\n")
        from paseo.cli.hints import program_not_found

        hint = program_not_found(result.get("error"))
        if hint:
            sys.stderr.write(f"paseo: hint: {hint}\n")
    elif outcome == "timeout":
        sys.stderr.write(
            f"paseo: agent {agent} is still {result.get('status')} (wait timed out); "
            f"follow it with `paseo attach {agent}`\n"
        )
    else:
        sys.stderr.write(f"paseo: agent {agent} was stopped ({result.get('status')})\n")
    return code


def ago(stamp: Any) -> str | None:
    """``12s ago`` / ``5m ago`` / ``3h ago`` / ``2d ago`` for an ISO timestamp."""
    if not isinstance(stamp, str):
        return None
    from datetime import datetime

    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    seconds = max(0, int(time.time() - then.timestamp()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


# ------------------------------------------------------------------------- readable events

FILTERS: dict[str, frozenset[str]] = {
    "text": frozenset({"user_message", "assistant_message", "reasoning"}),
    "tools": frozenset({"tool_call"}),
    "errors": frozenset({"turn_failed", "error"}),
    "permissions": frozenset({"permission_requested", "permission_resolved"}),
}

_COLORS = {
    "user": "1;36",
    "dim": "2",
    "tool": "33",
    "ok": "32",
    "bad": "31",
    "ask": "35",
}


def _kind(event: Mapping[str, Any]) -> str:
    item = event.get("item")
    if event.get("type") == "timeline" and isinstance(item, Mapping):
        return str(item.get("type"))
    return str(event.get("type"))


def matches(event: Mapping[str, Any], name: str | None) -> bool:
    """Whether ``event`` passes the ``--filter`` ``name``."""
    if name is None:
        return True
    kind = _kind(event)
    if name == "errors" and kind == "tool_call":
        item = event.get("item") or {}
        return item.get("status") == "failed"
    return kind in FILTERS[name]


def _detail(detail: Mapping[str, Any] | None) -> str:
    if not detail:
        return ""
    for key in ("command", "path", "query", "url", "description"):
        if detail.get(key):
            return str(detail[key])
    return ""


_SHOWN_EVENTS = frozenset(
    {
        "thread_started",
        "turn_started",
        "turn_completed",
        "turn_failed",
        "turn_canceled",
        "permission_requested",
        "permission_resolved",
    }
)
_SHOWN_ITEMS = frozenset({"user_message", "tool_call", "todo", "error", "compaction"})


class Renderer:
    """Writes timeline entries as readable text; text chunks of one message join up."""

    def __init__(self, out: TextIO, *, color: bool, agent: str = "") -> None:
        self.out = out
        self.color = color
        self.agent = agent
        self._open: str | None = None

    def _paint(self, style: str, text: str) -> str:
        return f"\x1b[{_COLORS[style]}m{text}\x1b[0m" if self.color else text

    def _line(self, text: str) -> None:
        self.close()
        self.out.write(text + "\n")

    def close(self) -> None:
        """End a message whose text is still open."""
        if self._open is not None:
            self.out.write("\n")
            self._open = None

    def entry(self, entry: Mapping[str, Any]) -> None:
        self.event(entry.get("event") or {})
        self.out.flush()

    @staticmethod
    def unit(event: Mapping[str, Any]) -> str | None:
        """What :meth:`event` shows ``event`` as: one key per displayed item (the text chunks
        of one message share theirs), ``None`` when it shows nothing (usage, attention)."""
        kind = event.get("type")
        if kind == "timeline":
            item = event.get("item") if isinstance(event.get("item"), Mapping) else {}
            assert isinstance(item, Mapping)
            item_kind = item.get("type")
            if item_kind in ("assistant_message", "reasoning"):
                return f"{item_kind}:{item.get('messageId')}"
            if item_kind in _SHOWN_ITEMS:
                return f"{item_kind}:{id(item)}"
            return None
        return f"{kind}:{id(event)}" if kind in _SHOWN_EVENTS else None

    def event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), Mapping) else {}
        assert isinstance(item, Mapping)
        if kind == "timeline":
            self._item(item)
        elif kind == "thread_started":
            self._line(self._paint("dim", f"· session {event.get('sessionId')}"))
        elif kind == "turn_started":
            self._line(self._paint("dim", "· turn started"))
        elif kind == "turn_completed":
            self._line(self._paint("ok", "· turn completed"))
        elif kind == "turn_failed":
            self._line(self._paint("bad", f"✗ turn failed: {event.get('error')}"))
            if event.get("diagnostic"):
                self._line(self._paint("dim", str(event["diagnostic"])))
        elif kind == "turn_canceled":
            self._line(self._paint("tool", f"· turn canceled ({event.get('reason')})"))
        elif kind == "permission_requested":
            request = event.get("request") or {}
            hint = f"paseo permit allow {self.agent} {request.get('id')}" if self.agent else ""
            self._line(
                self._paint(
                    "ask",
                    f"? permission {request.get('id')} ({request.get('kind')}): "
                    f"{request.get('title')}" + (f" — {hint}" if hint else ""),
                )
            )
        elif kind == "permission_resolved":
            behavior = (event.get("resolution") or {}).get("behavior")
            self._line(self._paint("ask", f"· permission {event.get('requestId')}: {behavior}"))

    def _item(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type")
        if kind in ("assistant_message", "reasoning"):
            key = f"{kind}:{item.get('messageId')}"
            text = str(item.get("text") or "")
            if self._open != key:
                self.close()
                if kind == "reasoning":
                    self.out.write(self._paint("dim", "thinking: "))
                self._open = key
            self.out.write(self._paint("dim", text) if kind == "reasoning" else text)
        elif kind == "user_message":
            self._line(self._paint("user", f"> {item.get('text')}"))
        elif kind == "tool_call":
            status = item.get("status")
            style = {"failed": "bad", "completed": "ok"}.get(str(status), "tool")
            detail = _detail(item.get("detail"))
            self._line(
                self._paint(style, f"⚙ {item.get('name')} {status}")
                + (f" {detail}" if detail else "")
                + (f" — {item.get('error')}" if item.get("error") else "")
            )
        elif kind == "todo":
            for todo in item.get("items") or []:
                mark = {"completed": "x", "in_progress": "~"}.get(todo.get("status"), " ")
                self._line(f"[{mark}] {todo.get('text')}")
        elif kind == "error":
            self._line(self._paint("bad", f"error: {item.get('message')}"))
        elif kind == "compaction":
            self._line(self._paint("dim", "· context compacted"))


class Follower:
    """Live timeline entries of one agent, in order, with gaps re-fetched.

    Subscribes before reading the history, so nothing falls between the two; entries at or
    below the last cursor shown are skipped, and a sequence gap (or a reconnect) re-reads
    the durable timeline after that cursor.
    """

    def __init__(self, client: SyncClient, agent_id: str) -> None:
        self.client = client
        self.agent_id = agent_id
        # Imported here: queue brings threading, which the one-shot commands (ls) never need.
        import queue

        self.events: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.epoch: str | None = None
        self.seq = 0
        stream = f"agent:{agent_id}"
        client.on("agent.event", self._on_event)
        client.on("agent.deleted", self._on_deleted)
        client.on_gap(lambda name, _expected, _got: self._on_gap(name, stream))
        client.subscribe([stream, "agents"])

    def _on_event(self, _method: str, params: dict[str, Any]) -> None:
        if params.get("agentId") == self.agent_id:
            self.events.put(("entry", params.get("entry")))

    def _on_deleted(self, _method: str, params: dict[str, Any]) -> None:
        if params.get("agentId") == self.agent_id:
            self.events.put(("deleted", None))

    def _on_gap(self, name: str, stream: str) -> None:
        if name == stream:
            self.events.put(("gap", None))

    def history(
        self, tail: int | None, *, unit: Callable[[Mapping[str, Any]], str | None] | None = None
    ) -> list[dict[str, Any]]:
        """The stored entries, and the cursor after them: all of them, or the last ``tail``.

        With ``unit``, ``tail`` counts what is shown rather than stored entries: ``unit(event)``
        names the displayed item an entry belongs to (the chunks of one message share one) or
        is ``None`` for an entry that shows nothing, and older pages are read until ``tail``
        items are found.
        """
        params: dict[str, Any] = {"agentId": self.agent_id, "limit": HISTORY_PAGE, "tail": True}
        if tail is None:
            entries = self._all(params)
        elif unit is None:
            entries = self.client.call("agent.timeline", {**params, "limit": tail})["entries"]
        else:
            entries = self._last_units(params, tail, unit)
        if entries:
            self.epoch, self.seq = entries[-1]["epoch"], entries[-1]["seq"]
        else:
            self.epoch = self.client.call("agent.timeline", {**params, "limit": 1})["epoch"]
        return entries

    def _all(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = []
        after: dict[str, Any] | None = None
        while True:
            page = self.client.call("agent.timeline", {**params, "tail": False, "after": after})
            entries += page["entries"]
            if not page["hasMore"] or not page["entries"]:
                return entries
            last = page["entries"][-1]
            after = {"epoch": last["epoch"], "seq": last["seq"]}

    def _last_units(
        self,
        params: dict[str, Any],
        tail: int,
        unit: Callable[[Mapping[str, Any]], str | None],
    ) -> list[dict[str, Any]]:
        if tail <= 0:
            return []
        entries: list[dict[str, Any]] = []
        units: list[str] = []
        before: dict[str, Any] | None = None
        while True:
            page = self.client.call("agent.timeline", {**params, "before": before})
            batch = page["entries"]
            for entry in reversed(batch):
                key = unit(entry.get("event") or {})
                if key is not None and (not units or units[-1] != key):
                    if len(units) == tail:
                        return entries
                    units.append(key)
                entries.insert(0, entry)
            if not page["hasMore"] or not batch:
                return entries
            before = {"epoch": batch[0]["epoch"], "seq": batch[0]["seq"]}

    def _refetch(self) -> list[dict[str, Any]]:
        after = {"epoch": self.epoch, "seq": self.seq} if self.epoch else None
        page = self.client.call(
            "agent.timeline", {"agentId": self.agent_id, "after": after, "limit": 1000}
        )
        if page["reset"]:
            self.seq = 0
        self.epoch = page["epoch"]
        return list(page["entries"])

    def _fresh(self, entry: dict[str, Any]) -> bool:
        if entry.get("epoch") != self.epoch:
            self.epoch, self.seq = entry.get("epoch"), 0
        if int(entry["seq"]) <= self.seq:
            return False
        self.seq = int(entry["seq"])
        return True

    def follow(self, show: Callable[[dict[str, Any]], None], *, until: float | None = None) -> str:
        """Show live entries until the agent is deleted (``deleted``), the connection drops
        (``lost``) or ``until`` (monotonic) passes (``timeout``)."""
        import queue

        while True:
            timeout = 0.5 if until is None else max(0.0, min(0.5, until - time.monotonic()))
            try:
                kind, payload = self.events.get(timeout=timeout)
            except queue.Empty:
                if self.client.client.lost:
                    return "lost"
                if until is not None and time.monotonic() >= until:
                    return "timeout"
                continue
            if kind == "deleted":
                return "deleted"
            batch = self._refetch() if kind == "gap" else [payload]
            for entry in batch:
                if isinstance(entry, dict) and self._fresh(entry):
                    show(entry)


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


def entry_writer(
    args: argparse.Namespace, renderer: Renderer
) -> Callable[[Mapping[str, Any]], None]:
    """How a streaming command writes one timeline entry in the chosen ``-o`` format: readable
    text (table), one JSON object per line (json: JSON Lines, so a follower can parse each line
    as it arrives), or one YAML document per entry (yaml, ``---`` separated)."""
    if args.output == "json":

        def write_json(entry: Mapping[str, Any]) -> None:
            sys.stdout.write(dumps(entry) + "\n")
            sys.stdout.flush()

        return write_json
    if args.output == "yaml":
        from paseo.cli.output import dump_yaml

        def write_yaml(entry: Mapping[str, Any]) -> None:
            document = dump_yaml(dict(entry), explicit_start=True)
            sys.stdout.write(document)
            sys.stdout.flush()

        return write_yaml
    return renderer.entry
