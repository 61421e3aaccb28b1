"""Frame decoding refuses a frame nested too deep as a :class:`FrameError`, like any other
malformed frame, whether the parser itself gives up (``RecursionError``) or the frame parses."""

from __future__ import annotations

import pytest
from paseo_tswire.envelope import MAX_DEPTH, FrameError, parse_frame


def _nested(levels: int) -> str:
    return '{"type":"ping","x":' + '{"a":' * levels + "1" + "}" * levels + "}"


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, _nested(900), _nested(MAX_DEPTH)])
def test_a_frame_nested_too_deep_is_a_frame_error(text: str) -> None:
    with pytest.raises(FrameError, match="deeper than"):
        parse_frame(text)


def test_a_frame_within_the_bound_parses() -> None:
    assert parse_frame(_nested(MAX_DEPTH - 2)).kind == "ping"
