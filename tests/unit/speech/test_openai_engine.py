"""The ``openai`` engines against the fake audio routes: the request shape is the contract."""

from __future__ import annotations

import asyncio
import io
import wave
from collections.abc import Iterator

import pytest
from paseo_hookspecs.errors import InvalidParams, Unavailable
from paseo_speech_openai import OpenAiSpeechToText, OpenAiTextToSpeech
from paseo_speech_openai.http import AudioApi

from paseo.testing.fake_audio import FakeAudioServer, silence_wav


@pytest.fixture
def server() -> Iterator[FakeAudioServer]:
    with FakeAudioServer() as running:
        yield running


def test_transcription_sends_multipart_file_model_and_language(
    server: FakeAudioServer, spoken: bytes
) -> None:
    server.transcript = "close the window please"
    engine = OpenAiSpeechToText(
        {"provider": "openai", "baseUrl": server.url, "apiKey": "sk-site", "language": "en"}
    )
    text = asyncio.run(engine.transcribe(spoken, mime_type="audio/wav"))
    assert text == "close the window please"
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/audio/transcriptions")
    assert request.headers["authorization"] == "Bearer sk-site"
    assert request.fields == {"model": "whisper-1", "response_format": "json", "language": "en"}
    upload = request.files["file"]
    assert (upload.filename, upload.content_type, upload.data) == (
        "audio.wav",
        "audio/wav",
        spoken,
    )


def test_transcription_uses_the_site_model_and_a_per_call_language(
    server: FakeAudioServer,
) -> None:
    engine = OpenAiSpeechToText({"baseUrl": server.url, "model": "gpt-4o-transcribe"})
    asyncio.run(engine.transcribe(b"OggS", mime_type="audio/ogg", language="de"))
    (request,) = server.requests
    assert request.fields["model"] == "gpt-4o-transcribe"
    assert request.fields["language"] == "de"
    assert request.files["file"].filename == "audio.ogg"


def test_language_is_omitted_when_unset(server: FakeAudioServer) -> None:
    asyncio.run(OpenAiSpeechToText({"baseUrl": server.url}).transcribe(b"x", mime_type="audio/wav"))
    assert "language" not in server.requests[0].fields


def test_speech_posts_json_and_returns_wav(server: FakeAudioServer) -> None:
    engine = OpenAiTextToSpeech(
        {"baseUrl": server.url, "apiKey": "sk-t", "voice": "nova", "speed": 1.25}
    )
    audio, mime = asyncio.run(engine.synthesize("hello there"))
    assert (audio, mime) == (silence_wav(), "audio/wav")
    with wave.open(io.BytesIO(audio)) as reader:
        assert reader.getnchannels() == 1
    (request,) = server.requests
    assert request.path == "/v1/audio/speech"
    assert request.json == {
        "model": "tts-1",
        "input": "hello there",
        "voice": "nova",
        "response_format": "wav",
        "speed": 1.25,
    }


def test_key_and_base_url_fall_back_to_the_environment() -> None:
    env = {"OPENAI_API_KEY": "sk-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/custom"}
    api = AudioApi({}, env)
    assert api.api_key == "sk-env"
    assert api.url("audio/speech") == "http://127.0.0.1:9/custom/v1/audio/speech"
    site = AudioApi({"apiKey": "sk-site", "baseUrl": "http://h/v1/"}, env)
    assert (site.api_key, site.url("audio/speech")) == ("sk-site", "http://h/v1/audio/speech")
    assert AudioApi({}, {}).url("x") == "https://api.openai.com/v1/x"


def test_http_errors_keep_their_meaning(server: FakeAudioServer) -> None:
    engine = OpenAiSpeechToText({"baseUrl": server.url})
    server.fail_with = 400
    with pytest.raises(InvalidParams, match="400"):
        asyncio.run(engine.transcribe(b"x", mime_type="audio/wav"))
    server.fail_with = 503
    with pytest.raises(Unavailable, match="503"):
        asyncio.run(engine.transcribe(b"x", mime_type="audio/wav"))


def test_an_unreachable_server_is_unavailable(server: FakeAudioServer) -> None:
    url = server.url
    server.stop_thread()
    with pytest.raises(Unavailable, match="cannot reach"):
        asyncio.run(OpenAiTextToSpeech({"baseUrl": url}).synthesize("hi"))
