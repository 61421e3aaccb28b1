"""One delivery attempt per sink type; each raises :class:`DeliveryError` when it failed.

HTTP goes through the standard library in a worker thread (no HTTP client is a dependency of
Paseo, and one request per notification needs none). A command is started without a shell,
given the JSON on stdin, and killed and reaped when it outlives its timeout.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import urllib.error
import urllib.request

from paseo_notify.settings import CommandSink, NtfySink, WebhookSink

SIGNATURE_HEADER = "X-Paseo-Signature"
USER_AGENT = "paseo-notify"


class DeliveryError(Exception):
    """An attempt that failed; the message says how (status, timeout, exit code)."""


def signature(secret: bytes, body: bytes) -> str:
    """The ``X-Paseo-Signature`` value: ``sha256=`` and the HMAC-SHA256 of the body in hex."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            response.read(65536)
    except urllib.error.HTTPError as error:
        # The URL is not named: an ntfy topic or a webhook path is often the secret itself.
        raise DeliveryError(f"HTTP {error.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        raise DeliveryError(f"could not connect: {reason}") from None


async def post_webhook(sink: WebhookSink, body: bytes, secret: bytes | None) -> None:
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
    if secret is not None:
        headers[SIGNATURE_HEADER] = signature(secret, body)
    await asyncio.to_thread(_post, sink.url, body, headers, sink.timeout)


async def post_ntfy(sink: NtfySink, title: str, text: str, urgent: bool) -> None:
    # HTTP headers are Latin-1: a title in another script goes as RFC 2047 UTF-8.
    try:
        title.encode("latin-1")
        header = title
    except UnicodeEncodeError:
        header = "=?UTF-8?B?" + base64.b64encode(title.encode()).decode() + "?="
    headers = {"Title": header, "User-Agent": USER_AGENT, "Content-Type": "text/plain"}
    if urgent:
        headers["Priority"] = "high"
    await asyncio.to_thread(_post, sink.url, text.encode(), headers, sink.timeout)


async def run_command(sink: CommandSink, body: bytes) -> None:
    try:
        process = await asyncio.create_subprocess_exec(
            *sink.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        raise DeliveryError(f"could not run {sink.argv[0]}: {error.strerror or error}") from None
    try:
        stderr = await asyncio.wait_for(_exchange(process, body), sink.timeout)
    except TimeoutError:
        _kill(process)
        await process.wait()
        raise DeliveryError(f"{sink.argv[0]} ran longer than {sink.timeout:g}s") from None
    except asyncio.CancelledError:
        # The daemon is stopping: the program goes too, and is reaped before we do.
        _kill(process)
        await asyncio.shield(process.wait())
        raise
    if process.returncode != 0:
        tail = stderr.decode(errors="replace").strip().splitlines()[-1:] if stderr else []
        detail = f": {tail[0][:200]}" if tail else ""
        raise DeliveryError(f"{sink.argv[0]} exited with status {process.returncode}{detail}")


async def _exchange(process: asyncio.subprocess.Process, body: bytes) -> bytes:
    """Feed ``body`` to the program's stdin and collect its stderr until it exits.

    Not ``communicate``: a program that exits without reading its stdin (``true``, a script
    that only looks at its arguments) makes that raise a ``RuntimeError`` from the closed pipe
    transport, and such a program delivered fine.
    """
    stdin, errors = process.stdin, process.stderr
    if stdin is None or errors is None:  # both are PIPE in run_command
        raise DeliveryError("the program's stdin or stderr is not a pipe")

    async def feed() -> None:
        try:
            stdin.write(body)
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError, RuntimeError):
            pass  # it did not read all of it: its exit status says whether that was fine
        finally:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, RuntimeError):
                stdin.close()

    # Bounded: a chatty program's stderr is kept to its last 64 KiB.
    async def drain_errors() -> bytes:
        kept = b""
        while chunk := await errors.read(65536):
            kept = (kept + chunk)[-65536:]
        return kept

    _, stderr, _ = await asyncio.gather(feed(), drain_errors(), process.wait())
    return stderr


def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        process.kill()
