"""A minimal client for the OpenAI-compatible audio routes, on the standard library.

Two POSTs per use are all it needs, so it uses :mod:`urllib.request` in a worker thread rather
than adding an HTTP client dependency. The base URL and key come from the use site's settings
(``baseUrl``, ``apiKey``), else ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, else the public API.
"""

from __future__ import annotations

import json
import os
import secrets
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from paseo_hookspecs.errors import InvalidParams, PaseoError, Unavailable

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TIMEOUT = 120.0


class AudioApi:
    """The endpoint one use site talks to."""

    def __init__(self, settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        base = settings.get("baseUrl") or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.base_url = str(base).rstrip("/")
        key = settings.get("apiKey") or env.get("OPENAI_API_KEY")
        self.api_key = str(key) if key else None

    def url(self, route: str) -> str:
        """``route`` below the base URL, which may or may not already end in ``/v1``."""
        base = self.base_url if self.base_url.endswith("/v1") else f"{self.base_url}/v1"
        return f"{base}/{route}"

    def post(self, route: str, body: bytes, content_type: str) -> tuple[bytes, str]:
        """POST and return ``(body, content type)``; HTTP errors become :class:`PaseoError`."""
        headers = {"Content-Type": content_type, "Accept": "*/*"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(  # noqa: S310 (the URL is the user's configured endpoint)
            self.url(route), data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
                return response.read(), response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            raise _http_error(exc) from None
        except (urllib.error.URLError, OSError) as exc:
            raise Unavailable(f"cannot reach {self.url(route)}: {exc}") from None

    def post_json(self, route: str, payload: Mapping[str, Any]) -> tuple[bytes, str]:
        return self.post(route, json.dumps(payload).encode(), "application/json")


def _http_error(exc: urllib.error.HTTPError) -> PaseoError:
    try:
        detail: Any = json.loads(exc.read() or b"{}")
        message = str(detail.get("error", {}).get("message") or detail)
    except (ValueError, AttributeError):
        message = exc.reason
    text = f"speech endpoint answered {exc.code}: {message}"
    if exc.code in (400, 404, 413, 415, 422):
        return InvalidParams(text)
    return Unavailable(text)


def multipart(fields: Mapping[str, str], files: Mapping[str, tuple[str, bytes, str]]) -> tuple[
    bytes, str
]:
    """A ``multipart/form-data`` body and its content type.

    ``files`` maps a field name to ``(filename, data, content type)``.
    """
    boundary = f"paseo-{secrets.token_hex(12)}"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
            f"{value}\r\n".encode()
        )
    for name, (filename, data, content_type) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: {content_type}\r\n\r\n'
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
