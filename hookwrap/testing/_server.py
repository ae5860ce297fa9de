"""HTTP answers of the fake provider, and a loopback HTTP/1.1 server in a daemon thread
that sends them through real sockets (each SSE event one flushed chunk), so tests can cover
real connection pools and framing.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast

import attrs

__all__ = ["Answer", "SSEStream", "serve"]


class SSEStream:
    """An SSE body delivered one event at a time; a close before the last event is reported.

    Both a sync and an async byte stream, so one httpx transport serves both kinds of client
    (the transport subclasses it with httpx's stream bases).
    """

    def __init__(self, events: list[bytes], on_early_close: Callable[[], None]) -> None:
        self._events = events
        self._sent = 0
        self._closed = False
        self._on_early_close = on_early_close

    def __iter__(self) -> Iterator[bytes]:
        while self._sent < len(self._events) and not self._closed:
            self._sent += 1
            yield self._events[self._sent - 1]

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self:
            yield event

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self._sent < len(self._events):
                self._on_early_close()

    async def aclose(self) -> None:
        self.close()


@attrs.frozen
class Answer:
    """An HTTP answer: a whole `body`, or (when `stream` is set) SSE events sent one by one."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    stream: SSEStream | None = None


Answerer = Callable[[str, Mapping[str, str], bytes], Answer]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer: Answerer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that stops reading a stream at its end (`data: [DONE]`) and drops the
        # connection, as SDKs do, is no error worth a traceback
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)

    def drop_connections(self) -> None:
        """End idle keep-alive connections, so their handler threads finish."""
        with self.connections_lock:
            connections = list(self.connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        server = cast(_Server, self.server)
        path = self.path.partition("?")[0]
        try:
            answer = server.answer(path, dict(self.headers.items()), self._body())
        except Exception as exc:  # a bug in a wire: say so in the answer, keep serving
            message = f"FakeProvider failed: {exc!r}".encode()
            answer = Answer(500, (("content-type", "text/plain; charset=utf-8"),), message)
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        stream = answer.stream
        if stream is None:
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        try:
            for event in stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client went away: the stream counts as closed early
            self.close_connection = True
        finally:
            stream.close()

    do_GET = do_PUT = do_DELETE = do_POST

    def _body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("content-length") or 0))
        parts: list[bytes] = []
        while size := int(self.rfile.readline().split(b";")[0], 16):
            parts.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return b"".join(parts)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: tests read `provider.requests` instead


@contextlib.contextmanager
def serve(answer: Answerer) -> Generator[str, None, None]:
    """Serve `answer(path, headers, body)` on 127.0.0.1 at an ephemeral port while inside;
    yields the base URL."""
    server = _Server(answer)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.drop_connections()
        server.server_close()
        thread.join()
