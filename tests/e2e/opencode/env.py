"""The hermetic environment of the pinned OpenCode (``tests/agents``) against the fake model."""

from __future__ import annotations

import json
import os
from pathlib import Path

OPENCODE_MODEL = "fake/fake-model"


def opencode_env(fake_url: str, root: Path) -> dict[str, str]:
    """A private ``HOME`` and XDG directories under ``root``; the fake as the only enabled
    provider (``OPENCODE_CONFIG_CONTENT``, Chat Completions through the bundled
    ``@ai-sdk/openai-compatible``); every start-up download and side service switched off."""
    home = root / "home"
    dirs = {
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_STATE_HOME": home / ".local" / "state",
        "TMPDIR": root / "tmp",
    }
    for folder in (home, *dirs.values()):
        folder.mkdir(parents=True, exist_ok=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": OPENCODE_MODEL,
        "enabled_providers": ["fake"],
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake model server",
                "options": {"baseURL": f"{fake_url}/v1", "apiKey": "sk-fake-key-for-tests"},
                "models": {
                    "fake-model": {"name": "Fake model"},
                    "fake-think": {"name": "Fake thinking model", "reasoning": True},
                },
            }
        },
    }
    env = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL") if name in os.environ}
    env.update({name: str(path) for name, path in dirs.items()})
    env.update(
        {
            "HOME": str(home),
            "NO_COLOR": "1",
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            # No external plugins: otherwise it fetches them from the npm registry at start-up.
            "OPENCODE_PURE": "1",
        }
    )
    return env
