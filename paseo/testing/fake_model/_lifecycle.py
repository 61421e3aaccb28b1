"""One lifecycle for the test servers: ``async with`` on the caller's loop, or ``with`` on a
private loop in a daemon thread (for synchronous tests); and one HTTP serving loop for the fake
HTTP servers (model, audio), which differ only in what they answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from types import TracebackType
from typing import Generic, Self, TypeVar

from ._http import MAX_HEADER_BYTES, BadRequest, HttpRequest, ResponseWriter, read_request

R = TypeVar("R")


class LoopServer:
    """Subclasses implement ``async start()`` (listen on the running loop) and
    ``async stop()``; this class runs them either way."""

    thread_name = "test-server"

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def start_in_thread(self, timeout: float = 10.0) -> None:
        """Run the server on a private loop in a daemon thread."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name=self.thread_name, daemon=True)
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout)
        except BaseException:
            self.stop_thread(timeout)
            raise

    def stop_thread(self, timeout: float = 10.0) -> None:
        """Stop a server started with :meth:`start_in_thread` and join its thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            if not thread.is_alive():
                loop.close()
            self._loop = self._thread = None

    def __enter__(self) -> Self:
        self.start_in_thread()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop_thread()


class HttpLoopServer(LoopServer, Generic[R]):
    """A keep-alive HTTP/1.1 server on ``host``; subclasses answer in :meth:`_handle` and keep
    what they record with :meth:`_keep` (read back, thread-safely, through :attr:`requests`)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__()
        self.host = host
        self._requested_port = port
        self.port = port
        self._records: list[R] = []
        self._lock = threading.Lock()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def requests(self) -> list[R]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._records)

    def clear(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._records.clear()

    def _keep(self, record: R) -> R:
        with self._lock:
            self._records.append(record)
        return record

    async def _handle(self, request: HttpRequest, response: ResponseWriter) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        """Listen on the running loop; :attr:`port` is the real port afterwards."""
        self._server = await asyncio.start_server(
            self._serve_connection, self.host, self._requested_port, limit=MAX_HEADER_BYTES
        )
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        """Stop listening and drop every open connection (streams in flight are cut)."""
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                request = await read_request(reader, writer)
                if request is None:
                    break
                response = ResponseWriter(
                    reader,
                    writer,
                    keep_alive=request.keep_alive,
                    head_only=request.method == "HEAD",
                )
                await self._handle(request, response)
                if not request.keep_alive:
                    break
        except BadRequest as exc:
            with contextlib.suppress(ConnectionError):
                await ResponseWriter(reader, writer, keep_alive=False, head_only=False).send(
                    400, json.dumps({"error": {"message": str(exc)}}).encode()
                )
        except (ConnectionError, asyncio.IncompleteReadError):
            # The client went away; nothing to answer.
            pass
        except asyncio.CancelledError:
            # Only stop() cancels these tasks. Ending normally instead of re-raising keeps
            # Python 3.11's stream callback from logging the cancellation as an error.
            pass
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()
