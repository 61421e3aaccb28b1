"""The chat service as the plugin's hooks and handlers reach it (set by ``paseo_startup``).

Apart from :mod:`paseo_chat.rpc`, so registering the ``chat`` group imports neither its
handlers nor its params and results (loaded on its first call)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paseo_hookspecs.errors import Unavailable

if TYPE_CHECKING:
    from paseo_chat.service import ChatService


class Runtime:
    """The running service, set by ``paseo_startup``."""

    def __init__(self) -> None:
        self.service: ChatService | None = None

    def require(self) -> ChatService:
        if self.service is None:
            raise Unavailable("the chat service is not running")
        return self.service
