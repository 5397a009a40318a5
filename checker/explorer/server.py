"""The explorer's web server: the standard library's ``http.server`` over one ``Session``.

Routes: ``GET /`` the page, ``GET /api/state`` what it shows (JSON), ``GET /view`` the current
state drawn by the protocol (an HTML document the page frames), ``POST /api/step``
(``{"action": label or index}``), ``/api/back``, ``/api/reset`` (``{"initial": k}``: from the
k-th initial state, the first by default), ``/api/jump`` (``{"index": i}``: state i of the
loaded trace). A bad request gets a 4xx and a one-line JSON
error, never a traceback: an unknown path 404, a bad body 400, an action that is not enabled
409, a body that is not JSON 415, a method the route does not take 405. POST bodies must be JSON
(a cross-site form cannot send one), and while it listens on a loopback address the server
answers only requests addressed to one (no DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import json
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from hwcheck.checker.explorer.page import PAGE
from hwcheck.checker.explorer.session import Session, SessionError

MAX_BODY = 1 << 16
LOOPBACK_NAMES = ("localhost",)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host in LOOPBACK_NAMES


class Handler(BaseHTTPRequestHandler):
    session: Session  # set on the subclass ``serve`` makes
    loopback_only = True
    server_version = "hwcheck-explore"
    sys_version = ""

    # -- plumbing ----------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # quiet: the explorer's terminal shows only its own lines

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

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
        except Exception as e:  # noqa: BLE001 - never a traceback page
            self._json(500, {"error": f"internal error: {type(e).__name__}: "
                                      f"{str(e).splitlines()[0] if str(e) else ''}"})

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._route("GET")

    def do_HEAD(self) -> None:  # noqa: N802
        self._route("HEAD")

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST")

    def _body(self) -> dict[str, Any]:
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise SessionError("the body must be JSON (Content-Type: application/json)", 415)
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise SessionError("Content-Length is not a number") from None
        if n < 0 or n > MAX_BODY:
            raise SessionError(f"the body must be at most {MAX_BODY} bytes", 413)
        raw = self.rfile.read(n) if n else b"{}"
        try:
            obj = json.loads(raw or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise SessionError("the body is not JSON") from None
        if not isinstance(obj, dict):
            raise SessionError("the body must be a JSON object")
        return obj

    # -- routes ------------------------------------------------------------------------------

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
        self.session.step(body["action"])
        self._json(200, self.session.state())

    def back(self) -> None:
        self._body()
        self.session.back()
        self._json(200, self.session.state())

    def reset(self) -> None:
        self.session.reset(self._body().get("initial", 0))
        self._json(200, self.session.state())

    def jump(self) -> None:
        body = self._body()
        if "index" not in body:
            raise SessionError('the body must give a trace state: {"index": 3}')
        self.session.jump(body["index"])
        self._json(200, self.session.state())


GET = {"/": Handler.page, "/index.html": Handler.page, "/api/state": Handler.state,
       "/view": Handler.view}
POST = {"/api/step": Handler.step, "/api/back": Handler.back, "/api/reset": Handler.reset,
        "/api/jump": Handler.jump}


def serve(session: Session, host: str = "127.0.0.1", port: int = 8765) -> HTTPServer:
    """A server for ``session`` bound to (host, port) (port 0: any free one); the caller runs
    ``serve_forever`` (in a thread, for tests) and ``server_close``."""
    handler = type("SessionHandler", (Handler,), {"session": session,
                                                  "loopback_only": _loopback(host)})
    return HTTPServer((host, port), handler)
