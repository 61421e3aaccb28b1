"""The ``copilot`` provider: GitHub Copilot CLI as an ACP agent (``copilot --acp``).

Copilot needs either a GitHub sign-in (``copilot login``, or a token in ``COPILOT_GITHUB_TOKEN``,
``GH_TOKEN`` or ``GITHUB_TOKEN``) or a bring-your-own-key model provider, which also works fully
offline::

    COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false
    COPILOT_PROVIDER_BASE_URL=http://127.0.0.1:8000/v1 COPILOT_PROVIDER_TYPE=openai
    COPILOT_PROVIDER_API_KEY=...  COPILOT_MODEL=gpt-4.1  COPILOT_HOME=~/.copilot

set in the daemon's environment or in ``agents.providers.copilot.env`` of config.json. Without
either Copilot starts and then waits for a sign-in that never comes, so availability says what
is missing instead of "ready".

Modes are Copilot's ACP session modes, whose ids are URIs (:data:`MODES`). Copilot asks before
running tools in every mode but autopilot; its permission requests carry JSON-RPC id 0, which
the shared JSON-RPC peer treats as an id like any other.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import ClassVar

from paseo_hookspecs.atomic import atomic_write_text
from paseo_hookspecs.interfaces.agent import Availability, ModeInfo, ModelInfo, SessionConfig
from paseo_hookspecs.process import ProcessLauncher

from paseo_acp.provider import AcpProvider

_MODE_URI = "https://agentclientprotocol.com/protocol/session-modes#"
MODES = (
    ModeInfo(
        id=f"{_MODE_URI}agent",
        label="Agent",
        description="Default agent mode: asks before running tools",
        access="ask",
    ),
    ModeInfo(
        id=f"{_MODE_URI}plan",
        label="Plan",
        description="Plans multi-step work before changing anything",
        access="read-only",
    ),
    ModeInfo(
        id=f"{_MODE_URI}autopilot",
        label="Autopilot",
        description="Approves every tool and runs until the task is done (experimental)",
        access="full",
    ),
)
"""What ``copilot --acp`` 1.0.x reports in ``session/new``; listed without starting it."""

BYOK_VARIABLES = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_MODEL")
"""A bring-your-own-key provider needs these (``COPILOT_PROVIDER_API_KEY`` only if the
provider wants a key, which a local server may not)."""
TOKEN_VARIABLES = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")


INSTRUCTIONS_VARIABLE = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"

NO_TOOLS_ARGS = (
    # Only a tool that does not exist is available: the model is offered none (an empty list
    # would read as "no restriction").
    "--available-tools=paseo-no-tools",
    "--deny-tool=shell",
    "--deny-tool=write",
    "--deny-tool=url",
    "--disable-builtin-mcps",
)
"""``SessionConfig.noTools``: no tool offered, and the shell, file writes and fetches denied
without a prompt should one be offered all the same."""


def _copilot_home(env: dict[str, str]) -> Path:
    home = Path(env.get("COPILOT_HOME") or Path(env.get("HOME") or "~") / ".copilot")
    return home.expanduser()


def _signed_in(env: dict[str, str]) -> bool:
    """Whether ``copilot login`` left a user in ``$COPILOT_HOME/config.json``."""
    home = _copilot_home(env)
    try:
        config = json.loads((home / "config.json").read_text())
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and bool(
        config.get("logged_in_users") or config.get("last_logged_in_user")
    )


class CopilotProvider(AcpProvider):
    """``copilot --acp``; see the module docstring."""

    DEFAULT_ID: ClassVar[str] = "copilot"
    DEFAULT_LABEL: ClassVar[str] = "GitHub Copilot"
    DEFAULT_COMMAND: ClassVar[tuple[str, ...] | None] = ("copilot", "--acp")

    def install_hint(self) -> str:
        return "install it with `npm install -g @github/copilot` "

    async def availability(self) -> Availability:
        found = await super().availability()
        if found.status != "ready":
            return found
        env = self.effective_env()
        if all(env.get(name) for name in BYOK_VARIABLES):
            return found
        if any(env.get(name) for name in TOKEN_VARIABLES):
            return found
        if await asyncio.to_thread(_signed_in, env):
            return found
        missing = ", ".join(name for name in BYOK_VARIABLES if not env.get(name))
        return Availability(
            status="unavailable",
            reason=(
                "Copilot has no credentials and would wait for a sign-in: run `copilot login`, "
                f"set {' or '.join(TOKEN_VARIABLES)}, or configure a bring-your-own-key model "
                f"(missing: {missing}; add them to agents.providers.{self.id}.env, with "
                "COPILOT_OFFLINE=true to stay offline)"
            ),
        )

    async def list_modes(self, launcher: ProcessLauncher) -> list[ModeInfo]:
        return list(MODES)

    def _env(self, config: SessionConfig) -> dict[str, str]:
        env = super()._env(config)
        if config.systemPrompt:
            # Copilot advertises no ACP system prompt. It inlines the `*.instructions.md` files
            # of the directories in COPILOT_CUSTOM_INSTRUCTIONS_DIRS into its system prompt
            # (an AGENTS.md there is ignored): one directory per agent under Copilot's own home,
            # rewritten at each start.
            folder = _copilot_home(env) / "paseo-instructions" / config.agentId
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(folder / "paseo.instructions.md", config.systemPrompt + "\n")
            extra = env.get(INSTRUCTIONS_VARIABLE)
            env[INSTRUCTIONS_VARIABLE] = f"{extra},{folder}" if extra else str(folder)
        return env

    def supports_no_tools(self) -> bool:
        return True

    def launch_argv(self, argv: list[str], config: SessionConfig) -> list[str]:
        return [*argv, *NO_TOOLS_ARGS] if config.noTools else argv

    def session_config(self, config: SessionConfig) -> SessionConfig:
        # The system prompt went into the instructions directory above.
        return config.model_copy(update={"systemPrompt": None})

    async def _probe_models(self, launcher: ProcessLauncher) -> list[ModelInfo]:
        # Copilot reports no models over ACP (a probe would find none); under bring-your-own-
        # key the one model is COPILOT_MODEL.
        model = self.effective_env().get("COPILOT_MODEL")
        return [ModelInfo(id=model, label=model, default=True)] if model else []
