"""Sending through the Expo server SDK to the fake Expo service: batches and pruning."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from paseo_push.expo import batches, send

from paseo.testing.fake_expo import FakeExpo


@pytest.fixture
def fake() -> Iterator[FakeExpo]:
    with FakeExpo() as server:
        yield server


def _tokens(count: int) -> list[str]:
    return [f"ExponentPushToken[t{i}]" for i in range(count)]


def test_batches_cut_in_hundreds() -> None:
    assert [len(b) for b in batches(_tokens(250))] == [100, 100, 50]
    assert batches([]) == []


def test_250_tokens_go_out_in_requests_of_100_100_and_50(fake: FakeExpo) -> None:
    tokens = _tokens(250)
    outcome = send(
        tokens, title="t", body="b", data={"agentId": "a"}, endpoint=fake.url, timeout=10
    )
    assert [len(body) for body in fake.requests] == [100, 100, 50]
    assert [m["to"] for m in fake.messages] == tokens
    assert fake.messages[0]["data"] == {"agentId": "a"}
    assert outcome.delivered == 250
    assert outcome.unregistered == []


def test_tokens_expo_no_longer_knows_are_reported(fake: FakeExpo) -> None:
    tokens = _tokens(120)
    fake.unregistered |= {tokens[3], tokens[110]}
    outcome = send(tokens, title="t", body="b", data={}, endpoint=fake.url, timeout=10)
    assert outcome.unregistered == [tokens[3], tokens[110]]
    assert outcome.delivered == 118


def test_a_failed_batch_loses_only_itself() -> None:
    # Nothing listens on this port once the fake is stopped: every request fails to connect.
    with FakeExpo() as gone:
        url = gone.url
    outcome = send(_tokens(150), title="t", body="b", data={}, endpoint=url, timeout=5)
    assert outcome.failed_batches == 2
    assert outcome.delivered == 0
