"""A fake OpenAI-compatible audio server on 127.0.0.1 that records what it is sent.

``POST /v1/audio/transcriptions`` (multipart: ``file``, ``model``, ``language``, …) answers
``{"text": server.transcript}``; ``POST /v1/audio/speech`` (JSON ``{model, input, voice,
response_format}``) answers a short WAV of silence. Every request is kept in
:attr:`FakeAudioServer.requests` with its multipart fields and files or its JSON body, so a
speech engine's tests can check the exact request shape without a network::

    with FakeAudioServer() as server:          # or `async with` on the running loop
        engine = OpenAiSpeechToText({"baseUrl": server.url, "apiKey": "sk-test"})
        ...
        assert server.requests[0].fields["model"] == "whisper-1"

It shares the HTTP layer of :mod:`paseo.testing.fake_model` but is a separate server: audio
tests need no model script, and a provider's tests need no audio routes.
"""

from __future__ import annotations

import contextlib
import email.parser
import email.policy
import io
import json
import wave
from dataclasses import dataclass, field
from typing import Any

from paseo.testing.fake_model._http import (
    HttpRequest,
    ResponseWriter,
)
from paseo.testing.fake_model._lifecycle import HttpLoopServer

DEFAULT_TRANSCRIPT = "hello from the fake audio server"


@dataclass
class AudioFile:
    """One multipart file part."""

    filename: str | None
    content_type: str
    data: bytes


@dataclass
class AudioRequest:
    """One request as received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    fields: dict[str, str] = field(default_factory=dict)
    """Multipart form fields other than files (``model``, ``language``, …)."""
    files: dict[str, AudioFile] = field(default_factory=dict)
    json: Any = None


def silence_wav(seconds: float = 0.2, rate: int = 16000) -> bytes:
    """A mono 16-bit WAV of silence (what the fake ``/v1/audio/speech`` returns)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(bytes(2 * int(seconds * rate)))
    return buffer.getvalue()


def parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, str], dict[str, AudioFile]]:
    """The form fields and files of a ``multipart/form-data`` body."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    fields: dict[str, str] = {}
    files: dict[str, AudioFile] = {}
    if not message.is_multipart():
        return fields, files
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        filename = part.get_filename()
        if filename is not None:
            files[name] = AudioFile(filename, part.get_content_type(), data)
        else:
            fields[name] = data.decode()
    return fields, files


class FakeAudioServer(HttpLoopServer[AudioRequest]):
    """See the module docstring. :attr:`transcript` and :attr:`speech_audio` set the replies;
    :attr:`fail_with` (an HTTP status) makes every request fail."""

    thread_name = "fake-audio-server"

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host, port)
        self.transcript = DEFAULT_TRANSCRIPT
        self.speech_audio = silence_wav()
        self.fail_with: int | None = None

    @property
    def url(self) -> str:
        """The base URL to configure as ``baseUrl`` (ends in ``/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    def _record(self, request: HttpRequest) -> AudioRequest:
        record = AudioRequest(request.method, request.path, dict(request.headers), request.body)
        content_type = request.headers.get("content-type", "")
        if content_type.startswith("multipart/"):
            record.fields, record.files = parse_multipart(content_type, request.body)
        elif request.body:
            with contextlib.suppress(ValueError):
                record.json = json.loads(request.body)
        return self._keep(record)

    async def _handle(self, request: HttpRequest, response: ResponseWriter) -> None:
        record = self._record(request)
        if self.fail_with is not None:
            error = {"error": {"message": "fake audio server: failing on purpose"}}
            await response.send(self.fail_with, json.dumps(error).encode())
        elif request.method == "POST" and request.path == "/v1/audio/transcriptions":
            if "file" not in record.files:
                error = {"error": {"message": "multipart field 'file' is required"}}
                await response.send(400, json.dumps(error).encode())
            else:
                await response.send(200, json.dumps({"text": self.transcript}).encode())
        elif request.method == "POST" and request.path == "/v1/audio/speech":
            await response.send(200, self.speech_audio, "audio/wav")
        else:
            error = {"error": {"message": f"no route for {request.method} {request.path}"}}
            await response.send(404, json.dumps(error).encode())


__all__ = ["AudioFile", "AudioRequest", "FakeAudioServer", "parse_multipart", "silence_wav"]
