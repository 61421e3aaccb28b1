"""Decoding frames and dispatching calls to registered methods.

:func:`decode_frame` is a pure function (fuzzed by the tests): any text becomes either a
:class:`Call` or a :class:`Rejection` that says what to answer. :class:`MethodTable` holds every
method, and :func:`invoke` runs one call against it and returns the encoded answer.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from paseo_hookspecs.errors import AccessDenied, InvalidParams, PaseoError
from paseo_hookspecs.registration import (
    SESSION_KINDS,
    LazyRpcMethodGroup,
    RpcMethod,
    RpcMethodGroup,
)
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from paseo.rpc.errors import (
    InternalError,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    error_object,
)

if TYPE_CHECKING:
    from paseo_hookspecs.context import RpcContext

log = logging.getLogger("paseo.rpc")

MAX_METHOD_NAME = 128
HELLO = "server.hello"
HUB_BASE_METHODS = frozenset({HELLO, "server.ping"})
"""Kernel methods a hub session may call besides ``hub.*``."""

RequestId = str | int


@dataclass(frozen=True, slots=True)
class Call:
    """A well-formed request (``id`` set) or client notification (``notification``)."""

    id: RequestId | None
    method: str
    params: dict[str, Any]
    notification: bool


@dataclass(frozen=True, slots=True)
class Rejection:
    """A frame that cannot be called; ``id`` is ``None`` when it could not be read."""

    id: RequestId | None
    error: PaseoError
    notification: bool = False


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A ``\\uD800``-``\\uDFFF`` escape in a JSON text: the only way a lone surrogate gets in (a
text frame is valid UTF-8; the escape of a proper pair decodes to one character)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(text: str) -> str:
    """``text`` with every lone surrogate written as its ``\\uXXXX`` escape (safe to echo)."""
    return _SURROGATE.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def _bad_text(value: Any) -> str | None:
    """The path of the first string or key in ``value`` holding a lone surrogate, else ``None``.

    Iterative: decoded JSON may be nested as deep as the parser allows.
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{path}.{_escaped(key)}" if path else _escaped(key)
                if _SURROGATE.search(key):
                    return child_path
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{index}]") for index, child in enumerate(item))
    return None


def _unicode_rejection(message: dict[str, Any], request_id: RequestId | None) -> Rejection | None:
    """Refuse a request whose id, method or params hold a lone surrogate: such text cannot be
    encoded as UTF-8, so it could reach neither a file nor an answer."""
    if isinstance(request_id, str) and _SURROGATE.search(request_id):
        return Rejection(None, InvalidRequest("id is not valid Unicode text (a lone surrogate)"))
    notification = "id" not in message
    method = message.get("method")
    if isinstance(method, str) and _SURROGATE.search(method):
        return Rejection(
            request_id,
            InvalidRequest("method is not valid Unicode text (a lone surrogate)"),
            notification,
        )
    path = _bad_text(message.get("params"))
    if path is None:
        return None
    where = f"params.{path}" if path else "params"
    return Rejection(
        request_id,
        InvalidParams(
            f"{where} is not valid Unicode text (a lone surrogate); send UTF-8 text",
            data={"path": where},
        ),
        notification,
    )


def _valid_id(value: Any) -> bool:
    # bool is an int subclass but not a JSON-RPC id; floats are discouraged by the spec and
    # would not round-trip as map keys on the client side.
    return (isinstance(value, str) and len(value) <= 200) or (
        isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**53
    )


def decode_frame(text: str) -> Call | Rejection:
    """Turn one text frame into a call, or into the error to answer it with."""
    strict = True
    try:
        # orjson is several times faster than the stdlib on the small frames of the hot path.
        message = orjson.loads(text)
    except orjson.JSONDecodeError:
        # What orjson refuses (lone surrogate escapes, NaN, nesting past 1024) the stdlib
        # decides, so every such frame is answered exactly as it always was.
        strict = False
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):
            # ValueError covers malformed JSON and integers too long to convert;
            # RecursionError deeply nested arrays. Neither reveals anything about the server.
            return Rejection(None, ParseError("invalid JSON"))
    if isinstance(message, list):
        return Rejection(None, InvalidRequest("batch requests are not supported"))
    if not isinstance(message, dict):
        return Rejection(None, InvalidRequest("a request must be a JSON object"))
    has_id = "id" in message
    raw_id = message.get("id")
    request_id: RequestId | None = raw_id if has_id and _valid_id(raw_id) else None
    if has_id and request_id is None:
        return Rejection(None, InvalidRequest("id must be a string or an integer"))
    notification = not has_id
    # orjson refuses lone surrogates: only text the stdlib decoded can hold one.
    if not strict and _SURROGATE_ESCAPE.search(text):
        refused = _unicode_rejection(message, request_id)
        if refused is not None:
            return refused
    if message.get("jsonrpc") != "2.0":
        return Rejection(request_id, InvalidRequest('jsonrpc must be "2.0"'), notification)
    method = message.get("method")
    if not isinstance(method, str) or not method or len(method) > MAX_METHOD_NAME:
        return Rejection(
            request_id, InvalidRequest("method must be a non-empty string"), notification
        )
    params = message.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Rejection(request_id, InvalidParams("params must be an object"), notification)
    return Call(request_id, method, params, notification)


_ORJSON_OPTIONS = (
    orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
)
"""What the stdlib encoder did: keys that are not strings become strings, datetimes and
dataclasses go through ``default=str``."""


def _json(data: Any) -> str:
    try:
        return orjson.dumps(data, default=str, option=_ORJSON_OPTIONS).decode()
    except orjson.JSONEncodeError:
        pass  # a lone surrogate, or an integer beyond 64 bits: the stdlib handles both
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    if text.isascii() or not _SURROGATE.search(text):  # isascii() is O(1)
        return text
    # Text from the system (a file name that is not UTF-8) can hold lone surrogates: escape
    # them so the frame stays valid UTF-8 and the writer never fails on it.
    return json.dumps(data, ensure_ascii=True, separators=(",", ":"), default=str)


def _body(data: BaseModel | Any) -> str:
    if not isinstance(data, BaseModel):
        return _json(data)
    try:
        # The serializer itself: model_dump_json's keyword handling costs as much on a small
        # result.
        return data.__pydantic_serializer__.to_json(data, by_alias=True).decode()
    except PydanticSerializationError:  # a lone surrogate (see _json)
        return _json(data.model_dump(mode="json", by_alias=True))


def _id(request_id: RequestId | None) -> str:
    # Integers (the usual id) need no encoder; _valid_id bounds them.
    return str(request_id) if type(request_id) is int else _json(request_id)


@dataclass(frozen=True, slots=True)
class Encoded:
    """A result encoded once (:meth:`of`), which a handler returns for a large payload that
    many answers carry (a project icon): every frame answering with it refers to this one text
    instead of holding its own copy."""

    json: str

    @classmethod
    def of(cls, result: BaseModel) -> Encoded:
        return cls(_body(result))


@dataclass(frozen=True, slots=True)
class SharedFrame:
    """An answer frame around an :class:`Encoded` result: joined only while it is written."""

    head: str
    body: str

    def text(self) -> str:
        return f"{self.head}{self.body}}}"

    @property
    def size(self) -> int:
        """What a copy of the frame would occupy: the byte bounds count it whole."""
        return sys.getsizeof(self.head) + sys.getsizeof(self.body)


Frame = str | SharedFrame
"""An encoded frame, as queued for a connection."""


def encode_result(request_id: RequestId, result: Any) -> Frame:
    """The response frame for a result (a pydantic model, plain JSON data, or
    :class:`Encoded`)."""
    head = f'{{"jsonrpc":"2.0","id":{_id(request_id)},"result":'
    if isinstance(result, Encoded):
        return SharedFrame(head, result.json)
    return f"{head}{_body(result)}}}"


def encode_error(request_id: RequestId | None, error: PaseoError) -> str:
    """The error response frame for ``error``."""
    return _json({"jsonrpc": "2.0", "id": request_id, "error": error_object(error)})


def encode_notification(method: str, params: BaseModel | dict[str, Any]) -> str:
    """A notification frame."""
    return f'{{"jsonrpc":"2.0","method":{_json(method)},"params":{_body(params)}}}'


@dataclass(slots=True)
class MethodEntry:
    name: str
    access: frozenset[str]
    immediate: bool
    owner: str
    """``kernel`` or the name of the plugin that registered the method."""
    method: RpcMethod | None
    """The method; ``None`` until its lazy group is loaded (:meth:`MethodTable.resolve`)."""
    lazy: LazyRpcMethodGroup | None = None


class MethodTable:
    """Every RPC method the daemon serves, and which session kind may call which.

    A :class:`~paseo_hookspecs.registration.LazyRpcMethodGroup` is entered from its stubs (name,
    access, ``immediate``) and loaded on the first call of one of its methods: what a session
    may call, ``server.hello`` and an unknown method's error need no model of it.
    """

    def __init__(self) -> None:
        self._methods: dict[str, MethodEntry] = {}
        self._allowed: dict[str, frozenset[str]] = {}

    def __len__(self) -> int:
        return len(self._methods)

    def __iter__(self) -> Any:
        return iter(self._methods.values())

    def add_group(self, group: RpcMethodGroup | LazyRpcMethodGroup, owner: str) -> list[str]:
        """Add ``group``'s methods; returns the names refused (logged), e.g. duplicates or names
        outside the group's ``area.`` prefix."""
        lazy = group if isinstance(group, LazyRpcMethodGroup) else None
        refused: list[str] = []
        for method in group.methods:
            problem = None
            if not method.name.startswith(f"{group.area}.") or len(method.name) > MAX_METHOD_NAME:
                problem = f"is outside its group's prefix {group.area!r}."
            elif method.name in self._methods:
                problem = f"is already registered by {self._methods[method.name].owner}"
            elif not method.access <= SESSION_KINDS:
                problem = f"names unknown session kinds {sorted(method.access - SESSION_KINDS)}"
            if problem is not None:
                log.error("RPC method %r from %s refused: it %s", method.name, owner, problem)
                refused.append(method.name)
                continue
            self._methods[method.name] = MethodEntry(
                method.name,
                method.access,
                method.immediate,
                owner,
                method if isinstance(method, RpcMethod) else None,
                lazy,
            )
        self._allowed.clear()
        return refused

    def get(self, name: str) -> MethodEntry | None:
        return self._methods.get(name)

    def resolve(self, entry: MethodEntry) -> RpcMethod:
        """``entry``'s method, loading its lazy group first if need be.

        A loaded method that differs from its stub in access or ``immediate`` (or that the
        group does not have) is refused: the allowlists were made from the stub.
        """
        if entry.method is not None:
            return entry.method
        lazy = entry.lazy
        if lazy is None:  # cannot happen: only a lazy group's entries start without a method
            raise InternalError(f"{entry.name} has no handler")
        loaded = {method.name: method for method in lazy.load().methods}
        for stub in lazy.methods:
            held = self._methods.get(stub.name)
            if held is None or held.lazy is not lazy:
                continue  # refused when the group was added
            method = loaded.get(stub.name)
            if method is None or (method.access, method.immediate) != (
                stub.access,
                stub.immediate,
            ):
                log.error(
                    "RPC method %r from %s refused: its loaded group %s",
                    stub.name,
                    held.owner,
                    "lacks it" if method is None else "gives another access or immediate",
                )
                continue
            held.method = method
        if entry.method is None:
            raise InternalError(f"{entry.name} could not be loaded")
        return entry.method

    def allowed_for(self, kind: str) -> frozenset[str]:
        """The explicit allowlist of a session kind.

        A hub session is confined to ``hub.*`` methods (plus hello and ping) even if another
        method's ``access`` mentions ``hub``.
        """
        cached = self._allowed.get(kind)
        if cached is None:
            cached = frozenset(
                name
                for name, entry in self._methods.items()
                if kind in entry.access
                and (kind != "hub" or name.startswith("hub.") or name in HUB_BASE_METHODS)
            )
            self._allowed[kind] = cached
        return cached


def _validation_details(error: ValidationError) -> list[dict[str, Any]]:
    # Only locations and messages: echoing input values back could reflect secrets into logs.
    return [
        {"path": ".".join(str(part) for part in detail["loc"]), "message": detail["msg"]}
        for detail in error.errors(include_url=False, include_input=False)
    ]


def _prepare(table: MethodTable, allowed: frozenset[str], call: Call) -> tuple[RpcMethod, Any]:
    """The method to run and its validated params; raises the error to answer with."""
    entry = table.get(call.method)
    if entry is None:
        raise MethodNotFound(f"unknown method {call.method!r}")
    if call.method not in allowed:
        raise AccessDenied(f"this session may not call {call.method!r}")
    method = entry.method or table.resolve(entry)
    if method.params is None:
        if call.params:
            raise InvalidParams(f"{call.method} takes no params")
        return method, None
    try:
        # The validator itself: model_validate's keyword handling costs a third as much again.
        return method, method.params.__pydantic_validator__.validate_python(call.params)
    except ValidationError as exc:
        details = _validation_details(exc)
        # The message names the first bad field, so a client showing only it says which.
        first = f": {details[0]['path']}: {details[0]['message']}" if details else ""
        raise InvalidParams(
            f"invalid params for {call.method}{first}", data={"errors": details}
        ) from None


async def invoke(
    table: MethodTable, allowed: frozenset[str], call: Call, ctx: RpcContext
) -> Frame | None:
    """Run ``call``; return the frame to send back (``None`` for a client notification)."""
    try:
        method, params = _prepare(table, allowed, call)
        result = await method.handler(ctx, params)
        if call.notification or call.id is None:
            return None
        return encode_result(call.id, result)
    except PaseoError as error:
        if call.notification:
            return None
        return encode_error(call.id, error)
    except Exception:
        log.exception("RPC method %s failed", call.method)
        if call.notification:
            return None
        return encode_error(call.id, InternalError("internal error"))
