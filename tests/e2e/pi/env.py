"""The hermetic environment of the pinned Pi (``tests/agents``) against the fake model server."""

from __future__ import annotations

import json
import os
from pathlib import Path

PI_MODEL = "fake/fake-model"
"""The model every test uses: the fake's OpenAI Chat Completions endpoint under provider
``fake`` (``fake/fake-think`` is the same endpoint marked as a reasoning model)."""


def pi_env(fake_url: str, root: Path) -> dict[str, str]:
    """A private ``HOME`` and ``PI_CODING_AGENT_DIR`` under ``root`` whose ``models.json`` has
    the fake as the only provider; no telemetry, no start-up network traffic."""
    home, agent_dir, tmp = root / "home", root / "pi-agent", root / "tmp"
    for folder in (home, agent_dir, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            "fake": {
                "baseUrl": f"{fake_url}/v1",
                "api": "openai-completions",
                "apiKey": "sk-fake-key-for-tests",
                "models": [
                    {"id": "fake-model", "reasoning": False},
                    {"id": "fake-think", "reasoning": True},
                ],
            }
        }
    }
    (agent_dir / "models.json").write_text(json.dumps(models))
    # Pi picks its default model from settings; the fake's must be it.
    settings = {"defaultProvider": "fake", "defaultModel": "fake-model"}
    (agent_dir / "settings.json").write_text(json.dumps(settings))
    env = {name: os.environ[name] for name in ("PATH", "LANG", "LC_ALL") if name in os.environ}
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "NO_COLOR": "1",
            "PI_CODING_AGENT_DIR": str(agent_dir),
            "PI_OFFLINE": "1",
            "PI_TELEMETRY": "0",
        }
    )
    return env
