"""Resume intents: the durable note that a Hub-owned initial turn is running.

Provider session resume restores a conversation but not a turn the daemon was killed in the
middle of. While a Hub execution's initial turn runs, its prompt and stable message id are kept
in ``$PASEO_HOME/hub-resume-intents.json`` (0600: prompts may be sensitive). After a restart the
Hub's replayed create finds the armed intent and replays the turn; the replay is recorded
before it is sent, so it happens at most once even if the daemon dies again. Completion,
failure, cancellation, archive or any non-running state removes (disarms) the intent.
An intent also remembers whether the create asked for ``autoArchive``: the turn it stands for
is the one whose completion archives the agent, also when it is a replay.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from paseo_hub import files
from paseo_hub.relationship import now_iso

FILE_NAME = "hub-resume-intents.json"


class Intent(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    prompt: str
    messageId: str
    armedAt: str
    replayedAt: str | None = None
    autoArchive: bool = False


class IntentFile(BaseModel):
    model_config = ConfigDict(extra="allow", defer_build=True)

    version: int = 1
    intents: dict[str, Intent] = {}


class IntentStore:
    """Intents keyed by execution id; every change is written before the call returns."""

    def __init__(self, home: Path) -> None:
        self._path = home / FILE_NAME
        self._intents: dict[str, Intent] = {}
        self._lock = asyncio.Lock()

    async def load(self) -> None:
        document = await asyncio.to_thread(files.read_json, self._path)
        try:
            self._intents = dict(IntentFile.model_validate(document or {}).intents)
        except ValidationError:
            # A damaged file must not stop the relationship; losing an intent means at worst
            # that an interrupted turn is not replayed.
            self._intents = {}

    def get(self, execution_id: str) -> Intent | None:
        return self._intents.get(execution_id)

    async def arm(
        self, execution_id: str, prompt: str, message_id: str, *, auto_archive: bool = False
    ) -> None:
        async with self._lock:
            self._intents[execution_id] = Intent(
                prompt=prompt, messageId=message_id, armedAt=now_iso(), autoArchive=auto_archive
            )
            await self._save()

    async def mark_replayed(self, execution_id: str) -> None:
        async with self._lock:
            intent = self._intents.get(execution_id)
            if intent is not None:
                self._intents[execution_id] = intent.model_copy(update={"replayedAt": now_iso()})
                await self._save()

    async def disarm(self, execution_id: str) -> None:
        async with self._lock:
            if self._intents.pop(execution_id, None) is not None:
                await self._save()

    async def _save(self) -> None:
        if self._intents:
            document = IntentFile(intents=dict(self._intents)).model_dump(mode="json")
            await asyncio.to_thread(files.write_json, self._path, document)
        else:
            await asyncio.to_thread(files.remove, self._path)
