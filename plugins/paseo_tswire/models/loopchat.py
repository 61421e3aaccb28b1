"""``chat/*`` and ``loop/*`` messages (``packages/server/src/shared/messages.ts`` and the loop
and chat schemas of the TypeScript daemon, as captured in the wire reference)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from paseo_tswire.models.wire import Inbound, Wire

# --- chat ---------------------------------------------------------------------------------


class ChatRoom(Wire):
    id: str
    name: str
    purpose: str | None
    createdAt: str
    updatedAt: str
    messageCount: int = Field(ge=0)
    lastMessageAt: str | None


class ChatMessage(Wire):
    id: str
    roomId: str
    authorAgentId: str
    body: str
    replyToMessageId: str | None
    mentionAgentIds: list[str]
    createdAt: str


class RoomReply(Wire):
    """``create``, ``inspect`` and ``delete`` answers."""

    requestId: str
    room: ChatRoom | None
    error: str | None


class RoomsReply(Wire):
    requestId: str
    rooms: list[ChatRoom]
    error: str | None


class PostReply(Wire):
    requestId: str
    message: ChatMessage | None
    error: str | None


class ReadReply(Wire):
    requestId: str
    messages: list[ChatMessage]
    error: str | None


class WaitReply(Wire):
    requestId: str
    messages: list[ChatMessage]
    timedOut: bool
    error: str | None


class ChatCreate(Inbound):
    requestId: str
    name: str
    purpose: str | None = None


class ChatList(Inbound):
    requestId: str


class ChatRoomRef(Inbound):
    requestId: str
    room: str


class ChatPost(ChatRoomRef):
    body: str
    authorAgentId: str | None = None
    replyToMessageId: str | None = None


class ChatRead(ChatRoomRef):
    limit: int | None = None
    since: str | None = None
    authorAgentId: str | None = None


class ChatWait(ChatRoomRef):
    afterMessageId: str | None = None
    timeoutMs: int | None = None


# --- loops --------------------------------------------------------------------------------


class LoopLogEntry(Wire):
    seq: int = Field(gt=0)
    timestamp: str
    iteration: int | None
    source: Literal["loop", "worker", "verifier", "verify-check"]
    level: Literal["info", "error"]
    text: str


class LoopVerifyCheck(Wire):
    command: str
    exitCode: int
    passed: bool
    stdout: str
    stderr: str
    startedAt: str
    completedAt: str


class LoopVerifyPrompt(Wire):
    passed: bool
    reason: str
    verifierAgentId: str | None
    startedAt: str
    completedAt: str


LoopStatus = Literal["running", "succeeded", "failed", "stopped"]


class LoopIteration(Wire):
    index: int = Field(gt=0)
    workerAgentId: str | None
    workerStartedAt: str
    workerCompletedAt: str | None
    verifierAgentId: str | None
    status: LoopStatus
    workerOutcome: Literal["completed", "failed", "canceled"] | None
    failureReason: str | None
    verifyChecks: list[LoopVerifyCheck]
    verifyPrompt: LoopVerifyPrompt | None


class LoopRecord(Wire):
    id: str
    name: str | None
    prompt: str
    cwd: str
    provider: str
    model: str | None
    workerProvider: str | None
    workerModel: str | None
    verifierProvider: str | None
    verifierModel: str | None
    verifyPrompt: str | None
    verifyChecks: list[str]
    archive: bool
    sleepMs: int = Field(ge=0)
    maxIterations: int | None
    maxTimeMs: int | None
    status: LoopStatus
    createdAt: str
    updatedAt: str
    startedAt: str
    completedAt: str | None
    stopRequestedAt: str | None
    iterations: list[LoopIteration]
    logs: list[LoopLogEntry]
    nextLogSeq: int = Field(gt=0)
    activeIteration: int | None
    activeWorkerAgentId: str | None
    activeVerifierAgentId: str | None


class LoopListItem(Wire):
    id: str
    name: str | None
    status: LoopStatus
    cwd: str
    createdAt: str
    updatedAt: str
    activeIteration: int | None


class LoopReply(Wire):
    """``run``, ``inspect`` and ``stop`` answers."""

    requestId: str
    loop: LoopRecord | None
    error: str | None


class LoopListReply(Wire):
    requestId: str
    loops: list[LoopListItem]
    error: str | None


class LoopLogsReply(Wire):
    requestId: str
    loop: LoopRecord | None
    entries: list[LoopLogEntry]
    nextCursor: int = Field(ge=0)
    error: str | None


class LoopRun(Inbound):
    requestId: str
    prompt: str
    cwd: str
    provider: str | None = None
    model: str | None = None
    verifierProvider: str | None = None
    verifierModel: str | None = None
    verifyPrompt: str | None = None
    verifyChecks: list[str] | None = None
    name: str | None = None
    sleepMs: int | None = None
    maxIterations: int | None = None
    maxTimeMs: int | None = None


class LoopList(Inbound):
    requestId: str


class LoopRef(Inbound):
    requestId: str
    id: str


class LoopLogs(LoopRef):
    afterSeq: int | None = None


LOOPCHAT_OUTBOUND: dict[str, type[Wire]] = {
    "chat/create/response": RoomReply,
    "chat/list/response": RoomsReply,
    "chat/inspect/response": RoomReply,
    "chat/delete/response": RoomReply,
    "chat/post/response": PostReply,
    "chat/read/response": ReadReply,
    "chat/wait/response": WaitReply,
    "loop/run/response": LoopReply,
    "loop/list/response": LoopListReply,
    "loop/inspect/response": LoopReply,
    "loop/logs/response": LoopLogsReply,
    "loop/stop/response": LoopReply,
}
