"""Checks a plugin contributes to ``paseo doctor`` (``paseo_register_doctor_checks``).

A check runs in the ``paseo doctor`` process, not in the daemon: the daemon may be stopped
(then check what can be checked offline: the plugin's files under ``scope.home``) or running
(then ask it, as a client does: ``scope.call`` for the plugin's own RPC methods,
``scope.http_url`` for an HTTP app it mounts). Each finding says what it found and, unless
``ok``, the exact fix: a command to run or a setting to change::

    @hookimpl
    def paseo_register_doctor_checks(register):
        register(DoctorCheck("my-plugin", my_check))

    def my_check(scope: DoctorScope) -> list[DoctorFinding]:
        ...

A check that raises is reported as a ``fail`` naming the error; it never stops the others. It
must be bounded (every network wait with a timeout) and read-only.

.. versionadded:: 2.0
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

DoctorStatus = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class DoctorFinding:
    """One result: ``found`` says what is there, ``fix`` what to do (``None`` when ``ok``)."""

    name: str
    status: DoctorStatus
    found: str
    fix: str | None = None


@runtime_checkable
class DoctorScope(Protocol):
    """What a check may look at."""

    @property
    def home(self) -> Path:
        """The state root being examined (it may not exist yet)."""

    @property
    def daemon_running(self) -> bool:
        """Whether this home's daemon runs and answers."""

    def http_url(self, path: str) -> str | None:
        """``http://host:port<path>`` on the running daemon's first TCP listen address;
        ``None`` when it is not running or listens on no TCP address."""

    def call(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float = 10.0
    ) -> Any:
        """Call an RPC method on the running daemon as a local client and return its result.
        Raises :class:`~paseo_hookspecs.errors.Unavailable` when it is not running, the
        method's :class:`~paseo_hookspecs.errors.PaseoError` (``method_not_found`` when no
        loaded plugin serves it) as answered."""


@dataclass(frozen=True)
class DoctorCheck:
    """A group of findings under ``group`` (shown as a heading; ``-o json``'s ``group``)."""

    group: str
    run: Callable[[DoctorScope], Sequence[DoctorFinding]]


__all__ = ["DoctorCheck", "DoctorFinding", "DoctorScope", "DoctorStatus"]
