"""A scripted fake model server for driving real agent programs hermetically.

It serves, on 127.0.0.1 with no API key:

- the Anthropic Messages API: ``POST /v1/messages`` (streaming SSE and whole JSON; the query string
  is ignored, Claude Code sends ``?beta=true``), ``POST /v1/messages/count_tokens``;
- the OpenAI Responses API: ``POST /v1/responses`` (streaming and whole JSON);
- OpenAI Chat Completions: ``POST /v1/chat/completions`` (streaming and whole JSON);
- ``GET /v1/models`` (a list readable by both SDK families), ``GET``/``HEAD /`` probes.

Answers are scripted by directives in the prompt (:data:`DIRECTIVE_HELP`), e.g.
``[[shell:echo hi]]`` makes the model call the request's shell tool; every request is recorded
(:class:`RecordedRequest`) for assertions. :class:`RefusingProxy` records and refuses any other
outbound attempt. See ``docs/testing.md``.
"""

from .proxy import RefusingProxy
from .script import DIRECTIVE_HELP, Conversation, Reply, ToolCall, ToolSpec, plan_reply
from .server import DEFAULT_MODELS, FakeModelServer, RecordedRequest

__all__ = [
    "DEFAULT_MODELS",
    "DIRECTIVE_HELP",
    "Conversation",
    "FakeModelServer",
    "RecordedRequest",
    "RefusingProxy",
    "Reply",
    "ToolCall",
    "ToolSpec",
    "plan_reply",
]
