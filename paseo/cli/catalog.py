"""The kernel's command groups: name, one-line summary and the module that implements it.

Plain data so ``paseo --help`` renders without importing anything else.
"""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (summary, module under paseo.cli.commands[:its configure function])
    "daemon": ("Start, stop and inspect the Paseo daemon", "daemon"),
    "start": ("Start the daemon (as `paseo daemon start`)", "daemon:configure_start"),
    "restart": ("Restart the daemon (as `paseo daemon restart`)", "daemon:configure_restart"),
    "status": ("Show the daemon's status (as `paseo daemon status`)", "daemon:configure_status"),
    "reload": ("Re-read config.json in the running daemon", "reload"),
    "config": ("Read, change and validate config.json", "config"),
    "plugins": ("List and manage plugins", "plugins"),
    "store": ("Durable state: migrate between store drivers", "store"),
    "doctor": ("Check everything Paseo needs and say what to fix", "doctor"),
    "run": ("Create an agent, send it a prompt, print its reply", "run"),
    "ls": ("List agents", "ls"),
    "attach": ("Follow an agent's live events", "attach"),
    "logs": ("Show an agent's timeline", "logs"),
    "send": ("Prompt an agent and print its reply", "send"),
    "wait": ("Wait until an agent is idle, needs permission or fails", "wait"),
    "stop": ("Interrupt agents and stop their processes (the daemon: `daemon stop`)", "stop"),
    "archive": ("Stop an agent and hide it from ls", "archive"),
    "delete": ("Move agents to the trash (restorable for 30 days)", "delete"),
    "trash": ("Deleted agents: list, restore, empty for good", "trash"),
    "checkpoints": ("An agent's turn checkpoints in its git working tree", "checkpoints"),
    "diff": ("Unified diff of what an agent's turn changed", "checkpoints:configure_diff"),
    "undo": ("Take an agent's turn back (--redo: the undo)", "checkpoints:configure_undo"),
    "import": ("Adopt a Claude, Codex or ACP session, with its history", "import_session"),
    "inspect": ("Everything about one agent", "inspect"),
    "usage": ("What agents spent: turns, tokens and USD, grouped", "usage"),
    "permit": ("List and answer permission requests", "permit"),
    "agent": ("Change an agent: mode, title, labels, reload", "agent"),
    "provider": ("Agent providers, their models and availability", "provider"),
    "project": ("Projects: the roots you work in", "project"),
    "workspace": ("Workspaces: exact directories, worktrees, pins and labels", "workspace"),
    "worktree": ("Paseo-owned Git worktrees", "worktree"),
    "git": ("A checkout: status, diff, commit, push, pull, switch, merge, stash", "git"),
    "label": ("The workspace label catalog", "label"),
    "schedule": ("Recurring prompts: cron (in a time zone) or interval", "schedule"),
    "skills": ("Paseo's orchestration skills for your agents", "skills"),
    "script": ("paseo.json scripts and services of a workspace", "script"),
    "terminal": ("Workspace terminals: create, capture, send keys, attach", "terminal"),
    "speech": ("Speech engines: list them, transcribe a file, say text", "speech"),
    "dictate": ("Stream audio through the daemon and print its transcript", "dictate"),
    "voice": ("Talk to an agent by voice; print or save what it says", "voice"),
}

GLOBAL_OPTIONS = """\
  -o, --output FORMAT   table (default), json or yaml
  --json                same as -o json
  -q, --quiet           print ids only (or nothing)
  --no-headers          omit table headers
  --home DIR            state root (default: $PASEO_HOME or ~/.paseo)
  -h, --help            show help (also after any command)
  -V, --version         print the version
"""


def render_help() -> str:
    """The top-level help text."""
    width = max(len(name) for name in COMMANDS) + 2
    lines = [
        "usage: paseo [OPTIONS] COMMAND ...",
        "",
        "Paseo supervises AI coding agents on this machine.",
        "",
        "Commands:",
    ]
    lines += [f"  {name.ljust(width)}{summary}" for name, (summary, _) in COMMANDS.items()]
    lines += [
        "",
        "Options:",
        GLOBAL_OPTIONS.rstrip("\n"),
        "",
        "Plugins can add command groups: `paseo plugins list --hook paseo_register_cli_commands`.",
        "Run `paseo COMMAND --help` for the options of a command.",
        "",
    ]
    return "\n".join(lines)
