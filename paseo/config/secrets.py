"""Which parts of ``config.json`` are secrets, and the view of a document that hides them.

One definition for every reader that shows configuration to someone: the daemon's
``config.get``/``config.patch`` answers and ``paseo config get|set`` print the same view, so a
key stored once is never echoed back by any of them (the CLI's ``--show-secrets`` is the owner's
explicit way round it).

The secret fields of the schema (:mod:`paseo.config.models`) are ``daemon.auth.password`` (a
bcrypt hash, still worth an offline attack), each speech site's ``apiKey`` (shown as
``hasApiKey``, see :mod:`paseo.config.speech_settings`) and whatever a provider's ``env`` or a
plugin's free-form ``settings`` names like a credential (``ANTHROPIC_API_KEY``, ``GITHUB_TOKEN``,
``clientSecret``). Names are matched, not paths, because the free-form parts have no schema.

Kept free of pydantic: ``paseo config get`` shows the file without building the models.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from paseo.config.speech_settings import read_view

REDACTED = "********"
"""What a secret's value is replaced with. A client that saves back what it read sends this
placeholder, which the write path recognises as "keep the stored value"."""

ENV_OVERRIDES = "envOverrides"

_SECRET_SUFFIXES = (
    "password",
    "passwd",
    "passphrase",
    "apikey",
    "secret",
    "token",
    "accesskey",
    "privatekey",
    "credential",
    "credentials",
    "authorization",
)
# An environment variable ending in _KEY (OPENAI_KEY, AWS_SECRET_ACCESS_KEY) is a credential
# by convention; camelCase keys ending in "key" (sortKey) are not.
_ENV_KEY = re.compile(r"(^|_)KEY$")
_NOT_LETTERS = re.compile(r"[^a-z0-9]")


def is_secret_name(name: str) -> bool:
    """Whether a field or variable called ``name`` holds a credential."""
    flat = _NOT_LETTERS.sub("", name.lower())
    return flat.endswith(_SECRET_SUFFIXES) or bool(_ENV_KEY.search(name))


def redact(value: Any) -> Any:
    """A copy of JSON data with every non-empty string under a secret name masked."""
    if isinstance(value, Mapping):
        return {
            key: REDACTED
            if isinstance(item, str) and item and is_secret_name(str(key))
            # Config paths -> the variables that set them: names, not values.
            else item
            if key == ENV_OVERRIDES
            else redact(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def public_view(document: Mapping[str, Any]) -> Any:
    """What a reader is shown of a config document (the file or the effective values): speech
    sites say ``hasApiKey``, every other secret is :data:`REDACTED`."""
    return redact(read_view(document))
