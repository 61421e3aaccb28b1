"""The ``omp`` provider: oh-my-pi (``@oh-my-pi/pi-coding-agent``) as an ACP agent (``omp acp``).

``omp`` is a script for the bun runtime (``#!/usr/bin/env bun``), so both ``omp`` and ``bun``
must be on the ``PATH`` the program gets. Its models come from ``~/.omp/agent/models.yml``
(or ``$PI_CODING_AGENT_DIR``) or from provider keys in the environment; a default model is set
in ``~/.omp/agent/config.yml`` as ``modelRoles: {default: <provider>/<model>}``. At start-up it
tries several public hosts (model catalogues); offline these fail fast and the session works.

Modes (:data:`MODES`) map omp's approval settings onto Paseo's:

- ``default``: omp's ACP ``default`` mode, in which it asks before ``bash``, ``edit``,
  ``delete`` and ``move`` (its ``write`` tool, which only creates files, never asks);
- ``plan``: omp's read-only planning mode;
- ``full-access``: ``--approval-mode yolo`` at start-up: it never asks. Chosen when the agent
  starts; a running session cannot switch into or out of it (omp reads the flag once).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from paseo_hookspecs.interfaces.agent import Availability, ModeInfo, SessionConfig
from paseo_hookspecs.process import ProcessLauncher

from paseo_acp.provider import AcpProvider

FULL_ACCESS = "full-access"
MODES = (
    ModeInfo(
        id="default",
        label="Default",
        description="Asks before running commands and editing, moving or deleting files",
        access="ask",
    ),
    ModeInfo(
        id="plan",
        label="Plan",
        description="Read-only: drafts a plan before any change",
        access="read-only",
    ),
    ModeInfo(
        id=FULL_ACCESS,
        label="Full access",
        description="Never asks (omp's yolo approval)",
        access="full",
    ),
)

KEY_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
)
"""Provider keys omp picks up from the environment (a subset: the common ones)."""
_CONFIG_FILES = ("models.yml", "models.yaml", "models.json", "agent.db")


def agent_dir(env: dict[str, str]) -> Path:
    """Where omp keeps its models and credentials for a program started with ``env``."""
    home = Path(env.get("HOME") or "~").expanduser()
    return Path(env.get("PI_CODING_AGENT_DIR") or home / ".omp" / "agent")


def _configured(env: dict[str, str]) -> bool:
    folder = agent_dir(env)
    return any((folder / name).is_file() for name in _CONFIG_FILES)


class OmpProvider(AcpProvider):
    """``omp acp``; see the module docstring."""

    DEFAULT_ID: ClassVar[str] = "omp"
    DEFAULT_LABEL: ClassVar[str] = "oh-my-pi"
    DEFAULT_COMMAND: ClassVar[tuple[str, ...] | None] = ("omp", "acp")

    def install_hint(self) -> str:
        return "install it with `npm install -g bun @oh-my-pi/pi-coding-agent` "

    async def availability(self) -> Availability:
        found = await super().availability()
        if found.status != "ready":
            return found
        if await asyncio.to_thread(self.find_program, "bun") is None:
            return Availability(
                status="unavailable",
                reason="omp runs on bun, which was not found on PATH: npm install -g bun",
            )
        env = self.effective_env()
        if any(env.get(name) for name in KEY_VARIABLES):
            return found
        if await asyncio.to_thread(_configured, env):
            return found
        return Availability(
            status="unavailable",
            reason=(
                "omp has no model configured: add providers to models.yml in "
                f"{await asyncio.to_thread(agent_dir, env)}, "
                f"sign in with `omp` once, or set one of {', '.join(KEY_VARIABLES)} "
                f"(in agents.providers.{self.id}.env or the daemon's environment)"
            ),
        )

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return list(MODES)

    def supports_no_tools(self) -> bool:
        return True

    def launch_argv(self, argv: list[str], config: SessionConfig) -> list[str]:
        argv = list(argv)
        if config.noTools:
            # omp's own switches (as pi's): no built-in tool, no extension, no LSP tools.
            argv += ["--no-tools", "--no-extensions", "--no-lsp"]
        elif config.modeId == FULL_ACCESS:
            argv += ["--approval-mode", "yolo"]
        if config.systemPrompt:
            # omp advertises no ACP system prompt; `omp acp` takes pi's start-up flag instead.
            # A one-line value naming a file would be read from that file: a newline keeps
            # the text the text.
            text = config.systemPrompt
            if "\n" not in text:
                text += "\n"
            argv.append(f"--append-system-prompt={text}")
        return argv

    def session_config(self, config: SessionConfig) -> SessionConfig:
        # Full access is the start-up flag above, not an ACP session mode of omp's; the
        # system prompt is a start-up flag too.
        changes: dict[str, object] = {"systemPrompt": None}
        if config.modeId == FULL_ACCESS:
            changes["modeId"] = None
        return config.model_copy(update=changes)
