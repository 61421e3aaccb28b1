"""Cost of redaction per timeline entry, against no redaction, measured in the same run.

What the timeline does when it makes an entry (``paseo/agents/timeline.py``): dump the event to
its JSON form, and with ``daemon.redaction`` on, redact that form (one combined pattern decides;
only a string it matches is rewritten, and only then is the event rebuilt). The entries are a
mix shaped like a coding agent's timeline: streamed replies of several lengths, shell calls
with output, file reads, permission requests; ``--secret-share`` of them carry a key. The two
variants are interleaved round by round; medians per entry are printed.

Run: ``.venv/bin/python bench/redaction.py`` (``--entries N``, ``--rounds N``,
``--secret-share F``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paseo_hookspecs.events import (
    AgentEvent,
    AssistantMessageItem,
    PermissionRequest,
    PermissionRequested,
    ReadDetail,
    ShellDetail,
    Timeline,
    ToolCallItem,
)

from paseo.redaction import build_redactor
from paseo.redaction.events import redact_event

WORDS = [
    "the",
    "function",
    "returns",
    "a",
    "list",
    "of",
    "entries",
    "sorted",
    "by",
    "key",
    "and",
    "the",
    "test",
    "checks",
    "that",
    "the",
    "token",
    "bucket",
    "refills;",
    "run",
    "pytest",
    "-q",
    "tests/unit",
    "and",
    "look",
    "at",
    "src/app/models.py",
    "line",
    "42",
    "for",
    "the",
    "definition",
    "of",
    "Config(password_min_length=8)",
    "which",
    "is",
    "used",
    "by",
    "the",
    "login",
    "view",
]
KEY = "sk-ant-api03-" + "Zx9" * 20


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def sample(count: int, secret_share: float, seed: int = 7) -> list[AgentEvent]:
    rng = random.Random(seed)
    events: list[AgentEvent] = []
    for index in range(count):
        secret = f" export ANTHROPIC_API_KEY={KEY}" if rng.random() < secret_share else ""
        kind = index % 4
        if kind == 0:
            text = _text(rng, rng.choice((20, 80, 400))) + secret
            events.append(Timeline(provider="p", item=AssistantMessageItem(text=text)))
        elif kind == 1:
            detail = ShellDetail(command="pytest -q", output=_text(rng, 300) + secret, exitCode=0)
            item = ToolCallItem(callId=f"c{index}", name="Bash", status="completed", detail=detail)
            events.append(Timeline(provider="p", item=item))
        elif kind == 2:
            detail_r = ReadDetail(path="src/app/models.py", content=_text(rng, 600) + secret)
            item = ToolCallItem(
                callId=f"r{index}", name="Read", status="completed", detail=detail_r
            )
            events.append(Timeline(provider="p", item=item))
        else:
            request = PermissionRequest(
                id=f"p{index}",
                title="Run a command",
                toolName="Bash",
                input={"command": "make test" + secret},
            )
            events.append(PermissionRequested(provider="p", request=request))
    return events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--secret-share", type=float, default=0.01)
    args = parser.parse_args()
    events = sample(args.entries, args.secret_share)
    env = {"OPENAI_API_KEY": "an-env-secret-value", "GH_TOKEN": "gho_" + "y" * 36}
    redactor = build_redactor(None, env)
    assert redactor is not None
    chars = sum(len(e.model_dump_json()) for e in events) / len(events)

    def plain() -> None:
        for event in events:
            event.model_dump(mode="json", exclude_none=True)

    def redacted() -> None:
        for event in events:
            redact_event(redactor, event, event.model_dump(mode="json", exclude_none=True))

    times: dict[str, list[float]] = {"off": [], "on": []}
    for round_ in range(args.rounds):
        order = [("off", plain), ("on", redacted)]
        for name, run in order if round_ % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - start) / len(events) * 1e6)
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print(
        f"{len(events)} entries (mean {chars:.0f} JSON chars, {args.secret_share:.0%} with a key), "
        f"{args.rounds} rounds, median per entry:"
    )
    print(f"  dump only (redaction off): {off:7.2f} µs")
    print(f"  dump + redaction (on):     {on:7.2f} µs   (+{on - off:.2f} µs, {on / off:.2f}x)")


if __name__ == "__main__":
    main()
