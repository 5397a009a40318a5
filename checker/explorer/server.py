"""The explorer's web server: the standard library's threaded ``http.server`` over one
``Session``.

Routes: ``GET /`` the page, ``GET /api/state`` what it shows (JSON), ``GET /view`` the current
state drawn by the protocol (an HTML document the page frames), ``POST /api/step``
(``{"action": label or index}``), ``/api/back``, ``/api/reset`` (``{"initial": k}``: from the
k-th initial state, the first by default), ``/api/jump`` (``{"index": i}``: state i of the
loaded trace). A bad request gets a 4xx and a one-line JSON
error, never a traceback: an unknown path 404, a bad body 400, an action that is not enabled
409, a body that is not JSON 415, a method the route does not take 405. POST bodies must be JSON
(a cross-site form cannot send one), and while it listens on a loopback address the server
answers only requests addressed to one (no DNS rebinding).

Every connection is served on a thread of its own (one request each, HTTP/1.0), so a slow or
idle client holds up no other; the session's lock makes each request's change and the state it
answers with one step. What a client can hold is bounded: at most ``max_connections`` at once
(the next is answered 503 at once and closed), the whole request (line, headers, body) within
``request_seconds`` of the connection's acceptance (else 408 and closed: an idle or slow-loris
connection), the answer sent within ``send_seconds``, a body of at most ``MAX_BODY`` bytes (413)
nested at most ``MAX_DEPTH`` deep (400, found before the JSON parser recurses). A client that
goes away mid-request or mid-answer is dropped without a word.
"""

from __future__ import annotations

import io
import ipaddress
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hwcheck.checker.explorer.page import PAGE
from hwcheck.checker.explorer.session import Session, SessionError

MAX_BODY = 1 << 16  # bytes
MAX_DEPTH = 32  # nesting of arrays and objects in a body (the API's own need one)
MAX_CONNECTIONS = 32  # served at once
REQUEST_SECONDS = 10.0  # from a connection's acceptance to the end of its request's body
SEND_SECONDS = 10.0  # to send an answer
DISCARD_MAX = 1 << 24  # a refused body up to this size is read and dropped before closing
LOOPBACK_NAMES = ("localhost",)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in LOOPBACK_NAMES


class ClientGone(ConnectionError):
    """The client closed the connection, reset it, or stopped reading the answer."""


class RequestTimeout(Exception):
    """The request did not arrive in full within the connection's time."""


def too_deep(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether ``text`` nests arrays and objects more than ``limit`` deep (brackets inside
    strings do not count): one pass over the characters, linear whatever the text (a body is at
    most ``MAX_BODY``), so ``json.loads`` never meets a nesting deep enough to exhaust Python's
    recursion limit."""
    depth = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return True
        elif c == "]" or c == "}":
            depth -= 1
    return False


def _answer(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.0 answer with a one-line JSON error, for a connection no handler serves."""
    body = (json.dumps({"error": message}) + "\n").encode()
    return (f"HTTP/1.0 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\n"
            f"Connection: close\r\n\r\n").encode() + body


def _send_now(sock: socket.socket, answer: bytes) -> None:
    """Send a short answer on ``sock`` without waiting for the client; the caller closes it
    (what has arrived of the request is read first, so that closing sends no reset ahead of the
    answer)."""
    try:
        sock.setblocking(False)
        try:
            sock.recv(1 << 16)
        except OSError:
            pass
        sock.settimeout(1.0)  # a few hundred bytes into an empty send buffer: at once
        sock.sendall(answer)
    except OSError:
        pass


class _TimedReader(io.RawIOBase):
    """A connection's reading side with one deadline for everything read through it (each
    receive waits only for what is left of it), so a client sending a byte at a time is cut off
    as surely as one sending nothing."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise RequestTimeout
        try:
            self.sock.settimeout(left)
            return self.sock.recv_into(buf)
        except TimeoutError:
            raise RequestTimeout from None
        except OSError as e:
            raise ClientGone(str(e)) from None


class ExplorerServer(ThreadingHTTPServer):
    """A thread per connection, at most ``max_connections`` at once; the limits every
    handler reads."""

    daemon_threads = True  # a connection being served does not keep the process alive
    block_on_close = False  # closing does not wait for connections still being served
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[Handler], *,
                 max_connections: int = MAX_CONNECTIONS,
                 request_seconds: float = REQUEST_SECONDS,
                 send_seconds: float = SEND_SECONDS) -> None:
        self.max_connections = max_connections
        self.request_seconds = request_seconds
        self.send_seconds = send_seconds
        self.connections = 0  # being served now
        self._count = threading.Lock()
        self.loopback_only = handler.loopback_only  # whether it answers loopback clients only
        super().__init__(address, handler)

    @property
    def url(self) -> str:
        """``http://HOST:PORT/`` of the address it listens on."""
        host, port = self.server_address[:2]
        shown = host.decode() if isinstance(host, bytes) else host  # an AF_INET address: a str
        return f"http://{shown}:{port}/"

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._count:
            full = self.connections >= self.max_connections
            if not full:
                self.connections += 1
        if full:
            _send_now(request, _answer(
                503, "Service Unavailable", f"the explorer is serving {self.max_connections} "
                                            "connections, its most: try again"))
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread to serve it: the slot is free again
            self._served()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._served()

    def _served(self) -> None:
        with self._count:
            self.connections -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A connection's fault says nothing (the client went away); anything else, one line."""
        e = sys.exc_info()[1]
        if isinstance(e, OSError) or e is None:
            return
        first = str(e).splitlines()[0] if str(e) else ""
        print(f"explore: serving {client_address[0]}: {type(e).__name__}: {first}",
              file=sys.stderr)


class Handler(BaseHTTPRequestHandler):
    session: Session  # set on the subclass ``serve`` makes
    server: ExplorerServer
    loopback_only = True
    server_version = "hwcheck-explore"
    sys_version = ""

    # -- plumbing ----------------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # read instead through the connection's deadline
        self.rfile = io.BufferedReader(_TimedReader(
            self.connection, time.monotonic() + self.server.request_seconds))
        self.unread = 0  # bytes of the body announced and not read

    def handle(self) -> None:
        try:
            super().handle()
        except RequestTimeout:
            self.close_connection = True
            _send_now(self.connection, _answer(
                408, "Request Timeout", f"the request did not arrive within "
                                        f"{self.server.request_seconds:g} s"))
        except ConnectionError:
            self.close_connection = True  # the client went away: nothing to say

    def handle_one_request(self) -> None:
        self.unread = 0
        super().handle_one_request()
        self._discard()

    def _discard(self) -> None:
        """Read and drop a body that was answered without being read (refused), up to
        ``DISCARD_MAX`` bytes, so that closing the connection does not reset it under a client
        still sending: the client reads its answer."""
        if not 0 < self.unread <= DISCARD_MAX:
            return
        try:
            while self.unread > 0 and (got := self.rfile.read(min(self.unread, 1 << 16))):
                self.unread -= len(got)
        except (RequestTimeout, ConnectionError):
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: the explorer's terminal shows only its own lines

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        try:
            self.connection.settimeout(self.server.send_seconds)  # for the whole answer
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except OSError as e:
            raise ClientGone(str(e)) from None

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, (json.dumps(obj) + "\n").encode(), "application/json")

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """Every error as one line of JSON; an unsupported method is 405, not 501."""
        if code == 501:
            code, message = 405, f"method {self.command} not allowed"
        try:
            self.close_connection = True
            self._json(code, {"error": message or self.responses.get(code, ("error",))[0]})
        except OSError:
            pass

    def _host_ok(self) -> bool:
        if not self.loopback_only:
            return True
        host = (self.headers.get("Host") or "").strip()
        if host.startswith("["):
            host = host[1:].split("]", 1)[0]
        else:
            host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        return _loopback(host)

    def _route(self, method: str) -> None:
        try:
            self.unread = self._announced()
            if not self._host_ok():
                return self._json(403, {"error": "the explorer answers only requests addressed "
                                                 "to a loopback address"})
            path = self.path.split("?", 1)[0]
            routes = GET if method in ("GET", "HEAD") else POST
            other = POST if routes is GET else GET
            fn = routes.get(path)
            if fn is None:
                if path in other:
                    return self._json(405, {"error": f"{path} takes "
                                                     f"{'POST' if routes is GET else 'GET'}"})
                return self._json(404, {"error": f"no such page: {path[:80]}"})
            fn(self)
        except SessionError as e:
            self._json(e.status, {"error": str(e)})
        except (ClientGone, RequestTimeout):
            raise  # the connection's, not the request's: ``handle`` ends it
        except Exception as e:  # noqa: BLE001 - never a traceback page
            self._json(500, {"error": f"internal error: {type(e).__name__}: "
                                      f"{str(e).splitlines()[0] if str(e) else ''}"})

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._route("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._route("HEAD")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def _length(self) -> int | None:
        """The Content-Length, 0 without one, None where it is not a number of bytes."""
        given = (self.headers.get("Content-Length") or "0").strip()
        return int(given) if given.isascii() and given.isdigit() else None

    def _announced(self) -> int:
        """The body's length as its Content-Length gives it (0 for a bad one: it is refused
        when the route reads the body); a body sent in chunks is refused (411)."""
        if self.headers.get("Transfer-Encoding") is not None:
            self.close_connection = True
            raise SessionError("a body must come with a Content-Length, not in chunks", 411)
        return self._length() or 0

    def _body(self) -> dict[str, Any]:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise SessionError("the body must be JSON (Content-Type: application/json)", 415)
        n = self._length()
        if n is None:
            given = self.headers.get("Content-Length", "")
            raise SessionError(f"Content-Length is not a number of bytes: {given[:40]!r}")
        if n > MAX_BODY:
            raise SessionError(f"the body must be at most {MAX_BODY} bytes", 413)
        raw = self.rfile.read(n) if n else b""
        self.unread = 0
        if len(raw) < n:
            raise SessionError(f"the body ended after {len(raw)} of its {n} bytes")
        try:
            text = raw.decode() or "{}"
        except UnicodeDecodeError:
            raise SessionError("the body is not JSON (not UTF-8)") from None
        if too_deep(text):
            raise SessionError(f"the body nests arrays and objects more than {MAX_DEPTH} deep")
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            raise SessionError("the body is not JSON") from None
        if not isinstance(obj, dict):
            raise SessionError("the body must be a JSON object")
        return obj

    # -- routes ------------------------------------------------------------------------------
    # A change and the state it answers with are one step under the session's lock; the answer
    # is sent after it, so a client slow to read holds up no other.

    def page(self) -> None:
        self._send(200, PAGE.encode(), "text/html; charset=utf-8")

    def state(self) -> None:
        self._json(200, self.session.state())

    def view(self) -> None:
        self._send(200, self.session.view().encode(), "text/html; charset=utf-8")

    def step(self) -> None:
        body = self._body()
        if "action" not in body:
            raise SessionError('the body must name an action: {"action": "Produce"}')
        with self.session.lock:
            self.session.step(body["action"])
            out = self.session.state()
        self._json(200, out)

    def back(self) -> None:
        self._body()
        with self.session.lock:
            self.session.back()
            out = self.session.state()
        self._json(200, out)

    def reset(self) -> None:
        body = self._body()
        with self.session.lock:
            self.session.reset(body.get("initial", 0))
            out = self.session.state()
        self._json(200, out)

    def jump(self) -> None:
        body = self._body()
        if "index" not in body:
            raise SessionError('the body must give a trace state: {"index": 3}')
        with self.session.lock:
            self.session.jump(body["index"])
            out = self.session.state()
        self._json(200, out)


GET = {"/": Handler.page, "/index.html": Handler.page, "/api/state": Handler.state,
       "/view": Handler.view}
POST = {"/api/step": Handler.step, "/api/back": Handler.back, "/api/reset": Handler.reset,
        "/api/jump": Handler.jump}


def serve(session: Session, host: str = "127.0.0.1", port: int = 8765, *,
          max_connections: int = MAX_CONNECTIONS, request_seconds: float = REQUEST_SECONDS,
          send_seconds: float = SEND_SECONDS) -> ExplorerServer:
    """A server for ``session`` bound to (host, port) (port 0: any free one); the caller runs
    ``serve_forever`` (in a thread, for tests) and ``server_close``."""
    handler = type("SessionHandler", (Handler,), {"session": session,
                                                  "loopback_only": _loopback(host)})
    return ExplorerServer((host, port), handler, max_connections=max_connections,
                          request_seconds=request_seconds, send_seconds=send_seconds)
