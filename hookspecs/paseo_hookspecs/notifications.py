"""Notification sinks as ``config.json`` declares them: ``daemon.notifications``.

The kernel validates this list at start-up, by ``paseo config set`` and ``paseo config
validate`` — all with these models, so a sink that start-up would refuse is refused when it is
written. Delivering is a plugin's job: it reads the list through
:class:`NotificationSinkSource` (the :class:`~paseo_hookspecs.context.DaemonContext` offers
it) and decides how to send. The models live in the contract so that any notifier — the
built-in one or a third party's — reads the same declarations.

.. versionadded:: 2.0
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

NotificationEvent = Literal["finished", "permission", "error", "budget", "schedule-failed"]
"""What a sink may ask for: an agent finished its turn, asks for a permission, failed, hit its
budget; a schedule's run failed."""

DEFAULT_EVENTS: tuple[NotificationEvent, ...] = ("finished", "permission", "error")

MAX_SINKS = 32


class _Sink(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    name: str | None = Field(
        default=None, max_length=64, description="shown in status (default: type and index)"
    )
    events: list[NotificationEvent] = Field(
        default_factory=lambda: list(DEFAULT_EVENTS), min_length=1
    )
    timeout: float = Field(10.0, gt=0, le=120, description="seconds one delivery attempt may take")
    retries: int = Field(3, ge=0, le=10, description="attempts after the first that fail")
    backoff: float = Field(
        1.0, gt=0, le=300, description="seconds before the first retry, doubled for each next"
    )
    queueSize: int = Field(100, ge=1, le=10_000, description="notifications waiting at most")


class WebhookSink(_Sink):
    """POST the notification as JSON; signed when ``secretFile`` is set."""

    type: Literal["webhook"]
    url: str = Field(pattern=r"^https?://")
    secretFile: str | None = Field(
        default=None,
        description="HMAC-SHA256 key file (created 0600 with a random key when absent; refused "
        "when group or others may read it); signs X-Paseo-Signature: sha256=<hex>",
    )


class NtfySink(_Sink):
    """POST a line of text to an ntfy topic URL, with its title as a header."""

    type: Literal["ntfy"]
    url: str = Field(pattern=r"^https?://", description="the topic URL, e.g. https://ntfy.sh/x")


class CommandSink(_Sink):
    """Run a program with the JSON on its stdin (e.g. a script calling notify-send)."""

    type: Literal["command"]
    argv: list[str] = Field(min_length=1)
    retries: int = Field(0, ge=0, le=10)


NotificationSink = Annotated[WebhookSink | NtfySink | CommandSink, Field(discriminator="type")]
"""One entry of ``daemon.notifications``, told apart by ``type``."""


@runtime_checkable
class NotificationSinkSource(Protocol):
    """A :class:`~paseo_hookspecs.context.DaemonContext` that hands out the declared sinks."""

    @property
    def notification_sinks(self) -> Sequence[WebhookSink | NtfySink | CommandSink]:
        """``daemon.notifications`` as start-up validated it (empty when absent)."""


__all__ = [
    "DEFAULT_EVENTS",
    "MAX_SINKS",
    "CommandSink",
    "NotificationEvent",
    "NotificationSink",
    "NotificationSinkSource",
    "NtfySink",
    "WebhookSink",
]
