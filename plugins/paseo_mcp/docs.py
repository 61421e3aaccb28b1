"""Generate docs/mcp.md: the prose below, then every tool with its input schema.

Run ``python -m paseo_mcp.docs docs/mcp.md``; a test fails when the file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paseo_mcp.tools import TOOLS, ToolSpec, input_schema

PROSE = """\
# The MCP server for agents

Agents supervised by Paseo drive Paseo themselves through an MCP server the daemon injects into
every agent it launches: one agent starts, steers and waits for sub-agents, schedules prompts
and makes worktrees. It is the built-in `mcp` plugin (`plugins/paseo_mcp`), built on the
official `mcp` Python SDK (streamable HTTP, stateless, JSON answers).

## Endpoint

`/mcp/agents` on the daemon's TCP listen address, beside `/ws` and `/api/*`: one port, one
trust model. Every request is screened exactly as a WebSocket upgrade is (an allowed `Host`, at
most one and an allowed `Origin`, trusted proxies for `X-Forwarded-For`), then must carry a
valid per-agent capability token (`?token=…`, or `Authorization: Bearer …`); otherwise it is
refused with 403 or 401 and a body that says nothing more. The screening is the daemon's
generic HTTP mount (`paseo_hookspecs.http`: any plugin can mount an ASGI app this way); the
token check is the plugin's. `enabled: false` in the plugin's settings (or `PASEO_MCP=false`)
turns the endpoint off (nothing is mounted, nothing injected), as does not loading the plugin
(`paseo daemon start --no-mcp`, the same as `--disable-plugin mcp`). A daemon listening only
on a unix socket serves no MCP (agent programs speak MCP over HTTP).

### Serving: why an adapter on the raw connection

The WebSocket transport is the `websockets` asyncio server, whose HTTP reader accepts only
`GET` upgrade requests; streamable-HTTP MCP needs `POST` bodies and streamed answers. Rather
than moving every connection onto an ASGI server (a rewrite of the transport, a second
WebSocket stack under `/ws`, and a slower start), the transport looks at the request line of
each new TCP connection: when the daemon has an app mounted for its path, the raw connection,
with the bytes already read, is handed to uvicorn's HTTP/1.1 protocol (h11) serving that ASGI
app; every other connection continues as before, untouched. A diverted connection answers with
`Connection: close`, so a kept-alive connection never carries a later request for `/ws` or
`/api/*` into the mounted app. The cost to WebSocket clients is one `find` on the first packet
of each connection (`bench/daemon.py`: round trip and start-to-ready figures in the report of
the change that added this).

A diverted connection is bounded before any app (or its token check) sees its request, for
every mounted path alike (`plugins/paseo_websocket/http_routes.py`): its headers must be
complete within 10 s of its request line and its body within 30 s (`PASEO_HTTP_HEAD_TIMEOUT` and
`PASEO_HTTP_BODY_TIMEOUT`, seconds, in the daemon's environment, override them; the body's is
never shorter than the head's), or the connection is closed without an answer; and at most 32
diverted connections may be receiving their request at once
(one not yet read has proved nothing, not even a token), the next one is answered `503` and
closed. A request once read is the app's to answer (`wait_for_agent` may take 30 s). A
connection that never finishes its request line stays with the WebSocket server, whose opening
handshake times out after 10 s.

## Capability tokens

An agent's token is `<agentId>.<HMAC-SHA256(key, agentId)>`, the key random and made again at
every daemon start (kept, 0600, in `$PASEO_HOME/plugin-data/mcp/token.key`, readable by the
daemon's own user as the local credential is): not guessable, worthless after a restart, and
the tokens themselves are stored nowhere. The token reaches only the agent's own session
configuration (never its stored record) and is never logged. An agent resumed after a restart
gets a fresh URL.

## Caller rules

Every tool drives the daemon through the contract's ports (`paseo_hookspecs.agents`, and the
narrow ports of schedules, worktrees, terminals, providers and voice), never config, auth,
plugins or daemon control, with the stable error codes of the wire methods, and with the
caller's identity:

* a child created with `create_agent` gets the label `paseo.parent-agent-id: <caller id>`,
  works in the caller's directory (agents get no `cwd`, mode or worktree inputs, as in the
  TypeScript Paseo) and inherits the caller's current mode. On the caller's provider that is
  the same mode; on another provider it is the mode of the same *access level*, which every
  provider declares on its modes (`ModeInfo.access`), or when the child's provider has none,
  of the nearest level below (a child never gets more autonomy than its parent); a mode with
  no level leaves the child in its provider's default:

  | level | Claude Code | Codex | OpenCode | omp | Copilot |
  |---|---|---|---|---|---|
  | `read-only` | `plan` | `read-only` | `plan` | `plan` | `…#plan` |
  | `ask` | `default` | `untrusted` | `build` | `default` | `…#agent` |
  | `edits` | `acceptEdits` | `auto` | (→ `build`) | (→ `default`) | (→ `…#agent`) |
  | `full` | `bypassPermissions` | `full-access` | `full-access` | `full-access` | `…#autopilot` |

  Pi has no modes (its child gets none); other ACP agents' modes, reported by their program,
  carry no level;
* a caller reaches itself and the agents it created, and no other agent unless the user
  allows it with `callerScope` in the plugin's settings (`plugins.mcp.settings` in
  `config.json`; `daemon.mcp.*` before, still read and moved there on the next `paseo config
  set` or `config.patch`):

  | `callerScope` | a caller reaches |
  |---|---|
  | `created` (default) | itself and the agents it created |
  | `workspace` | those, and every agent of its own workspace (the same project checkout) |
  | `all` | every agent of the daemon |

  Anything outside is `access_denied`; `list_agents` and `list_pending_permissions` show only
  what is in reach. Any other value is refused as start-up refuses it (`paseo config set`,
  `config.patch`, `paseo reload`, `paseo config validate`); a reload applies a change at once.

* a schedule or worktree is in reach when the agent that created it through the tools is
  (the plugin records who created each one, in `$PASEO_HOME/plugin-data/mcp/owners.json`,
  atomically, 0600): a caller sees and changes its own, and those of the agents it reaches.
  One no agent created (the user's, made with the CLI or an app) is out of reach unless
  `callerScope` is `all`: `list_schedules` and `list_worktrees` leave it out,
  `inspect/pause/resume/delete_schedule` and `archive_worktree` answer `access_denied`. This
  holds whoever created the calling agent: an agent a Hub started sees only its own schedules.
  `create_worktree` makes worktrees of the caller's own project (a `cwd` inside the caller's
  directory) unless `callerScope` is `all`; a worktree an identical earlier request had made
  (`reused`) does not become the caller's;
* a schedule's `new-agent` target is made as `create_agent` makes a child: it works in the
  caller's directory (a `cwd` naming another is refused), carries `paseo.parent-agent-id` (the
  target's `labels`), starts in the caller's mode mapped by access level unless `modeId` names
  one no higher than the caller's, and may set only `provider`, `model`, `thinkingOptionId`,
  `title` and `archiveOnFinish` besides: a `systemPrompt`, `mcpServers`, `providerOptions`,
  `featureValues`, `profile` or `isolation` of the caller's choosing is refused
  (`access_denied`), since the agent's program would run them with the user's trust;
* `set_agent_mode` (on the caller itself or an agent in reach) refuses a mode whose access
  level is above the caller's own current mode's, or that has no level to compare (the same
  mode on the same provider is always allowed);
* a permission request of another agent (a child's) is answered by a person by default:
  `respond_to_permission` on it answers `access_denied` ("a person must answer …"). Letting
  the parent answer it is a design choice the user can make with `childPermissions: "parent"`
  in the plugin's settings (then an agent answers the requests of every agent in its reach);
  `"person"` is the default. An agent
  answering its own request is not affected.

The settings `callerScope` and `childPermissions` widen what agents do, so only a local
session may change them; a reload applies them at once.

Errors come back as MCP tool errors (`isError: true`) whose text is
`{"error": {"code": "<stable code>", "message": "…"}}`, the codes of docs/protocol.md.

## notifyOnFinish

A child created with `notifyOnFinish: true` carries the label `paseo.notify-on-finish: true`.
When it finishes, errors or needs a permission, its parent is sent a prompt
`<paseo-system>Agent <title> (<id>) finished its turn. …</paseo-system>`. A prompt sent to a
running agent would replace its turn, so the notice is queued in
`$PASEO_HOME/plugin-data/mcp/notices.json` (atomic writes, 0600; the older
`$PASEO_HOME/mcp/notices.json` is read when it is absent) and delivered when the parent is idle:
after its own turn ends, or when the daemon starts again. A notice leaves the queue only once
the parent's prompt was accepted, so a restart loses none (one may be delivered twice if the
daemon dies between the two). The queue file also remembers, per child, the attention it
queued last: if the daemon dies after the child's turn ended (durably, in its timeline) but
before the notice was queued, the next start finds that attention unqueued and queues it then
(a `permission` one excepted: the request died with the process).

## Injection and policy

When the daemon listens on TCP and `injectIntoAgents` is not false, every new,
resumed or reloaded session gets (through the agent port's session contributor)
`mcpServers.paseo = {"type": "http", "url": "http://<listen>/mcp/agents?token=<token>"}`,
passed the way each provider's program takes it:
Claude Code `--mcp-config`, Codex thread config (`mcp_servers`), ACP `mcpServers` in
`session/new` / `session/load`.

`providers.<id>` of the plugin's settings (formerly `agents.providers.<id>.paseoTools`)
filters the catalog per provider: `enabled: false` offers no
Paseo tools (and injects nothing), `disabledTools` lists exact tool names to omit from
`tools/list` (and refuses them in `tools/call`). Absent means everything. The policy is
resolved when a session is created, resumed, imported or reloaded.

**The policy is a catalog filter, not a security boundary.** An agent that has a shell can
read its own token from its process configuration (Claude Code gets it on its command line)
and reach the daemon in other ways; the
policy decides what an agent is offered, not what it can do.

`agents.providers.<id>.disallowedTools` is honoured by Claude Code (`--disallowedTools`); Codex
and ACP agents have no equivalent a client can set, so it does not apply to them.

### Connecting in time

An agent program that gets no answer from an MCP server within its connect timeout runs its
turn without that server's tools. Building the server (importing the SDK) takes seconds on a
loaded machine, so it is not left to the first request: it starts, in a thread, when the first
session is given the server, while the agent program itself starts (and not at daemon start,
which it would slow). The programs are also given longer to connect:

* Claude Code waits for its servers before the first turn, ~25-30 s by default
  (`MCP_TIMEOUT`); it gets `MCP_TIMEOUT=60000` in its environment when it is given MCP servers
  and no `MCP_TIMEOUT` is set (it ignores more than 60 s).
* Codex gives a server 10 s by default (`startup_timeout_sec`) and does not wait for a slow
  one before its first turn, which then runs without that server's tools; every server it is
  given gets `startup_timeout_sec = 60`, and the warm-up above is what keeps its first turn
  supplied.

## Voice mode: `speak`

`speak` is offered to an agent only while voice mode is attached to it (`voice.start`,
`paseo voice`; see docs/speech.md): it is left out of `tools/list` and refused in `tools/call`
otherwise, whatever `disabledTools` says. Attaching restarts the agent's program
(the next prompt resumes it) so that it lists its tools again. Its permission requests (Claude
Code's default mode asks for MCP tools) are approved by voice mode. The text is synthesized
with `features.voiceMode.tts` and streamed to the voice client; the call returns once it is
sent, or fails with `conflict` when the user aborted.

## Tools other plugins contribute

A plugin owns its tools: it registers them with the `paseo_register_mcp_tools` hook
(`paseo_hookspecs.mcp_tools.McpTool`: name, description, a pydantic input model, an async
handler), the daemon hands them to this server (`McpToolSource`), and the server lists and
calls them beside its own, under the same token, the same `disabledTools` filter and the same
error shape. A name the catalog already has is refused (logged). The handler gets the call's
`McpToolScope` and nothing of this plugin's ports: `caller` (the agent the token identifies:
id, provider, directory, workspace, labels), `reaches(agentId)` (the caller rules above, so
`callerScope` widens a contributed tool's reach as it widens the catalog's), `child_mode`
(the mode an agent made on the caller's behalf starts in, never above the caller's),
`access()` (the caller's own level) and `child_labels()` (the labels that make an agent the
caller's child). Internal agents are given no MCP server at all.

The built-in chat and loops plugins contribute (docs/chat.md, docs/loops.md):

* **chat** — `chat_create`, `chat_list`, `chat_inspect`, `chat_post`, `chat_read`,
  `chat_wait`, with the `chat/*` wire's argument names. The author of a post is the caller
  (no author argument). An agent is *in* a room it created with `chat_create`, posted in, or
  was mentioned in; it sees and uses no other room (`access_denied`). A post may mention only
  agents in the room or agents the caller reaches: an agent cannot pull a stranger in. A wait
  lasts at most 30 s per call.
* **loops** — `loop_run` (the `loop/run` fields), `loop_list`, `loop_inspect`, `loop_logs`,
  `loop_stop`. A loop an agent starts works in the caller's directory or below it; its
  worker and verifier start in the caller's mode, mapped by access level (never above it),
  and are the caller's children; `verifyChecks` (shell commands the daemon runs without
  asking) need a caller whose mode never asks (`full`), others verify with `verifyPrompt`;
  `maxIterations` (at most 100) or `maxTimeMs` is required; a loop's own worker or verifier
  may not start loops. A caller reaches the loops it started and those of the agents it
  reaches; a person's only with `callerScope: all`.

## Tools

Terminal tools (`list_terminals`, `create_terminal`, `kill_terminal`, `capture_terminal`,
`send_terminal_keys`) come with the terminals service; they are not in this catalog yet.
"""


def contributed_tools() -> tuple[ToolSpec, ...]:
    """The tools Paseo's own plugins register (their entry points' hook, called as the
    daemon calls it): the built-in chat and loops plugins'. Third-party plugins document
    their own."""
    from importlib.metadata import entry_points

    from paseo_hookspecs import HOOK_GROUP
    from paseo_hookspecs.mcp_tools import McpTool

    from paseo_mcp.contributed import contributed_specs

    found: list[McpTool] = []
    for entry in sorted(entry_points(group=HOOK_GROUP), key=lambda e: e.name):
        if entry.dist is None or entry.dist.name != "paseo":
            continue
        hook = getattr(entry.load(), "paseo_register_mcp_tools", None)
        if callable(hook):
            hook(register=found.append)
    return contributed_specs(found)


def render() -> str:
    parts = [PROSE]
    for tool in (*TOOLS, *contributed_tools()):
        schema = json.dumps(input_schema(tool), indent=2, sort_keys=True)
        parts.append(f"\n### `{tool.name}`\n\n{tool.description}\n\n```json\n{schema}\n```\n")
    return "".join(parts)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m paseo_mcp.docs docs/mcp.md\n")
        return 2
    Path(argv[0]).write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
