"""A config document that sets every field of the schema, for round-trip tests."""

from __future__ import annotations

import copy
from typing import Any

import pytest

BCRYPT_HASH = "$2b$12$" + "a" * 53

FULL_CONFIG: dict[str, Any] = {
    "$schema": "https://paseo.sh/schema/config.json",
    "version": 1,
    "daemon": {
        "listen": "0.0.0.0:7777",
        "hostnames": [".example.com", "myhost"],
        "trustedProxies": ["loopback", "10.0.0.0/8"],
        "git": {"maxProcessesPerSecond": 32, "maxProcessConcurrency": 4},
        "appendSystemPrompt": "Be brief.",
        "terminalProfiles": [
            {"id": "shell", "name": "Shell", "command": "bash", "args": ["-l"], "icon": "term"}
        ],
        "agentProfiles": [
            {
                "id": "fast",
                "name": "Fast",
                "provider": "claude",
                "icon": "bolt",
                "color": "amber",
                "model": "haiku",
                "modeId": "default",
                "thinkingOptionId": "low",
                "featureValues": {"fast_mode": True},
                "notes": "for small edits",
                "cycle": True,
            }
        ],
        "cors": {"allowedOrigins": ["https://app.example.com"]},
        "relay": {
            "enabled": True,
            "endpoint": "relay.example.com:443",
            "publicEndpoint": "public.example.com:443",
            "useTls": True,
            "publicUseTls": False,
        },
        "auth": {"password": BCRYPT_HASH},
    },
    "app": {"baseUrl": "https://app.example.com"},
    "worktrees": {
        "root": "~/worktrees",
        "servicePorts": {"range": "3000-4000", "portScript": "./ports.sh"},
    },
    "providers": {"local": {"modelsDir": "/opt/models"}},
    "agents": {
        "skills": {"selection": {"mode": "custom", "skills": ["review", "plan"]}},
        "providers": {
            "claude": {"env": {"CLAUDE_DEBUG": "1"}, "disallowedTools": ["WebFetch"]},
            "my-claude": {
                "extends": "claude",
                "label": "My Claude",
                "description": "Claude through a proxy",
                "command": ["claude", "--proxy"],
                "env": {"HTTPS_PROXY": "http://proxy:3128"},
                "models": [
                    {
                        "id": "opus",
                        "label": "Opus",
                        "description": "big",
                        "isDefault": True,
                        "thinkingOptions": [
                            {"id": "high", "label": "High", "description": "d", "isDefault": True}
                        ],
                    }
                ],
                "additionalModels": [{"id": "sonnet", "label": "Sonnet"}],
                "disallowedTools": ["Bash"],
                "enabled": True,
                "order": 2,
            },
            "zed": {"extends": "acp", "label": "Zed", "command": ["zed-agent", "--acp"]},
        },
        "metadataGeneration": {
            "providers": [
                {"provider": "claude", "model": "haiku", "thinkingOptionId": "low"},
                {"provider": "codex"},
            ]
        },
    },
    "pluginsEnabled": True,
    "plugins": {
        "acme.tools": {
            "source": "directory",
            "path": "/srv/plugins/acme",
            "enabled": False,
            "settings": {"colour": "blue", "nested": {"n": 1}},
        },
        "mcp": {
            "settings": {
                "enabled": True,
                "injectIntoAgents": False,
                "providers": {
                    "my-claude": {"enabled": True, "disabledTools": ["browser_evaluate"]}
                },
            }
        },
    },
    "features": {
        "dictation": {
            "enabled": True,
            "stt": {
                "provider": "openai",
                "model": "gpt-4o-transcribe",
                "language": "en",
                "apiKey": "sk-dictation",
                "baseUrl": "https://stt.example.com/v1",
                "confidenceThreshold": -0.5,
            },
        },
        "voiceMode": {
            "enabled": False,
            "llm": {"provider": "claude", "model": "sonnet"},
            "stt": {"provider": "local", "model": "parakeet", "language": "fr"},
            "turnDetection": {"provider": "local"},
            "tts": {
                "provider": "local",
                "model": "kokoro",
                "voice": "af_heart",
                "speakerId": 3,
                "speed": 1.25,
            },
        },
    },
    "log": {
        "level": "debug",
        "format": "json",
        "console": {"level": "warn", "format": "pretty"},
        "file": {
            "level": "trace",
            "path": "logs/daemon.log",
            "rotate": {"maxSize": "20m", "maxFiles": 5},
        },
    },
    "storage": {"driver": "sqlite"},
}


@pytest.fixture
def full_config() -> dict[str, Any]:
    """A fresh deep copy of :data:`FULL_CONFIG`."""
    return copy.deepcopy(FULL_CONFIG)
