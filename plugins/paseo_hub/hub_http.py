"""The two HTTP calls the daemon makes to a Hub: enroll and revoke (reference sections 1, 3).

They run through :mod:`urllib` in a worker thread: two requests per relationship do not justify
an HTTP client dependency, and urllib handles TLS, chunked bodies and proxies correctly.
Redirects are refused so the enrollment token and the secret only ever go to the Hub's origin.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from paseo_hub.relationship import HUB_SCOPE, Relationship, check_socket_url, credential_verifier
from paseo_hub.text import printable, printable_list

MAX_BODY = 64 * 1024
RETRYABLE = frozenset({408, 429})


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes

    def error_text(self) -> str:
        """The Hub's ``{"error": …}`` string, if the body carries one."""
        try:
            document = json.loads(self.body)
        except ValueError:
            return ""
        error = document.get("error") if isinstance(document, dict) else None
        return printable(error) if isinstance(error, str) else ""


class NetworkError(Exception):
    """No HTTP answer: refused, reset, closed mid-answer, TLS failure or timeout."""


def _call(method: str, url: str, token: str, body: bytes | None, timeout: float) -> Answer:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=body, method=method, headers=headers)  # noqa: S310 (the origin was checked to be http or https)
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return Answer(response.status, response.read(MAX_BODY))
    except urllib.error.HTTPError as exc:
        try:
            data = exc.read(MAX_BODY)
        except (OSError, http.client.HTTPException):
            data = b""
        return Answer(exc.code, data)
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError):
            raise NetworkError("the Hub did not answer in time") from None
        raise NetworkError(f"cannot reach the Hub: {reason}") from None


async def request(
    method: str, url: str, token: str, body: dict[str, Any] | None, seconds: float
) -> Answer:
    """One request, given up after ``seconds`` (the worker thread's socket timeout)."""
    data = None if body is None else json.dumps(body).encode()
    return await asyncio.to_thread(_call, method, url, token, data, seconds)


# ---------------------------------------------------------------------------- enrollment


@dataclass(frozen=True)
class Enrolled:
    slug: str | None
    scopes: list[str]
    web_socket_url: str


@dataclass(frozen=True)
class Retry:
    reason: str


@dataclass(frozen=True)
class Rejected:
    reason: str


def enroll_body(relationship: Relationship, hostname: str | None) -> dict[str, Any]:
    """The strict enroll body: only the keys the Hub accepts (unknown keys are a 400)."""
    info, identity = relationship.relationship, relationship.identity
    assert identity is not None
    body: dict[str, Any] = {
        "daemonId": info.daemonId,
        "idempotencyKey": info.idempotencyKey,
        "serverId": identity.serverId,
        "daemonPublicKey": identity.daemonPublicKey,
        "credentialVerifier": credential_verifier(relationship.secret),
    }
    if hostname and 1 <= len(hostname) <= 253:
        body["hostname"] = hostname
    return body


_REJECTIONS = {
    "invalid enrollment token": "the Hub refused the enrollment token (unknown, expired or "
    "already used); mint a new one and connect again",
    "invalid enrollment": "the Hub refused the enrollment request as invalid",
    "daemon_slug_conflict": "the Hub already has a daemon with this host name",
    "unauthorized": "the Hub refused the enrollment (no valid token)",
}


async def enroll(
    relationship: Relationship, hostname: str | None, seconds: float
) -> Enrolled | Retry | Rejected:
    """One enroll POST. A lost answer is :class:`Retry` (same key and token next time: the
    Hub replays idempotently); a refusal or an answer that cannot be trusted is
    :class:`Rejected`."""
    info = relationship.relationship
    token = relationship.enrollment.token if relationship.enrollment else ""
    url = f"{info.hubOrigin}/api/daemons/enroll"
    try:
        answer = await request("POST", url, token, enroll_body(relationship, hostname), seconds)
    except NetworkError as exc:
        return Retry(str(exc))
    if answer.status in RETRYABLE or answer.status >= 500:
        detail = answer.error_text()
        return Retry(f"the Hub answered HTTP {answer.status}{': ' + detail if detail else ''}")
    if answer.status != 200:
        detail = answer.error_text()
        reason = _REJECTIONS.get(detail, f"the Hub refused the enrollment (HTTP {answer.status})")
        return Rejected(f"{reason}{f' ({detail})' if detail and detail not in reason else ''}")
    try:
        return _enrolled(answer.body, relationship)
    except ValueError as exc:
        return Rejected(f"the Hub answered enroll with an invalid body: {exc}")


def _enrolled(body: bytes, relationship: Relationship) -> Enrolled:
    try:
        document = json.loads(body)
    except ValueError:
        raise ValueError("not JSON") from None
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")  # noqa: TRY004 (a bad answer, not a bad call)
    info = relationship.relationship
    if document.get("daemonId") != info.daemonId:
        raise ValueError("daemonId does not match this daemon")
    scopes = document.get("scopes")
    if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
        raise ValueError("scopes is not a list of strings")
    if HUB_SCOPE not in scopes:
        raise ValueError(f"scopes do not grant {HUB_SCOPE}")
    url = check_socket_url(document.get("webSocketUrl"), info.hubOrigin)
    slug = document.get("slug")
    # Kept and shown to the user: printable and bounded (the check above saw the real list).
    safe_slug = (printable(slug) or None) if isinstance(slug, str) else None
    return Enrolled(safe_slug, printable_list(scopes), url)


# ---------------------------------------------------------------------------- revocation


async def revoke(relationship: Relationship, seconds: float) -> Retry | None:
    """One revocation DELETE; ``None`` when the relationship is gone on the Hub (204, or
    401/403/404: the credential is already invalid there), :class:`Retry` otherwise."""
    info = relationship.relationship
    url = f"{info.hubOrigin}/api/daemons/{info.daemonId}"
    try:
        answer = await request("DELETE", url, relationship.secret, None, seconds)
    except NetworkError as exc:
        return Retry(str(exc))
    if answer.status < 300 or answer.status in (401, 403, 404):
        return None
    return Retry(f"the Hub answered the revocation with HTTP {answer.status}")
