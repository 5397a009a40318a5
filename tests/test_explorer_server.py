"""The explorer's server against hostile clients: an idle or slow connection holds up nobody and
is cut off, connections are bounded, a body too deep or too large is refused before it is
parsed, a client that goes away leaves no traceback, and no request (Hypothesis writes them)
gets a 5xx or a traceback. Every server listens on 127.0.0.1, port 0; every socket has a
timeout that only guards against a hang."""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import kafka
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hwcheck.checker.explorer import server as explorer_server
from hwcheck.checker.explorer.server import serve
from hwcheck.checker.explorer.session import Session

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "counterexamples" / "hw-truncation" / "CommittedNotLost.itf.json"
GUARD = 30.0  # seconds: a socket that waits this long is a hang, not a slow machine
ROUTES = ["/", "/index.html", "/api/state", "/view", "/api/step", "/api/back", "/api/reset",
          "/api/jump"]


@pytest.fixture(scope="module")
def spec():
    return kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")


def _start(session: Session, **limits):
    """A server of ``session`` on 127.0.0.1, any free port, with ``serve``'s limits as given,
    serving on a thread; ``ended`` is set each time it is done with a connection (after its
    handler and any error it reports)."""
    srv = serve(session, "127.0.0.1", 0, **limits)
    srv.ended = threading.Event()
    close = srv.shutdown_request

    def shutdown_request(request):
        close(request)
        srv.ended.set()

    srv.shutdown_request = shutdown_request
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    return srv, thread


def _stop(srv, thread) -> None:
    srv.shutdown()
    srv.server_close()
    thread.join(GUARD)


@pytest.fixture
def serving(spec):
    """``serving(**limits)``: (server, port) of a fresh session; closed when the test ends."""
    servers = []

    def start(trace: bool = False, **limits):
        session = Session(spec)
        if trace:
            session.load_trace_file(TRACE)
        servers.append(_start(session, **limits))
        return servers[-1][0], servers[-1][0].server_address[1]

    yield start
    for srv, thread in servers:
        _stop(srv, thread)


@pytest.fixture(scope="module")
def fuzzed(spec):
    """The one server every fuzzed request goes to."""
    srv, thread = _start(Session(spec))
    yield srv
    _stop(srv, thread)


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=GUARD)
    sock.settimeout(GUARD)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """What the server sends until it closes (a reset after its answer ends it too)."""
    got = b""
    while True:
        try:
            part = sock.recv(1 << 16)
        except ConnectionResetError:
            return got
        if not part:
            return got
        got += part


def exchange(port: int, raw: bytes) -> bytes:
    """Send a raw request, end the sending side, and read the answer to its end."""
    with connect(port) as sock:
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # a broken pipe, a reset, not connected: answered and closed already
            pass
        return read_all(sock)


def parse(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("iso-8859-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(":") for line in lines[1:])}
    return status, headers, body


def one_line_error(answer: bytes) -> tuple[int, str]:
    """The status and the error of an answer that must be a one-line JSON error."""
    status, headers, body = parse(answer)
    assert headers["content-type"] == "application/json", answer[:300]
    text = body.decode()
    assert text.count("\n") == 1 and text.endswith("\n") and "Traceback" not in text, text
    return status, json.loads(text)["error"]


def get(port: int, path: str = "/api/state", body: bytes | None = None,
        headers: dict | None = None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body,
                                 method="GET" if body is None else "POST",
                                 headers=headers or {})
    if body is not None and "Content-Type" not in (headers or {}):
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=GUARD) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def wait_for(condition, what: str) -> None:
    """Poll ``condition`` until it holds; a hang guard, not a timing."""
    end = time.monotonic() + GUARD
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"hung: never {what}")
        time.sleep(0.01)


# -- one slow client holds up nobody ------------------------------------------------------------


@pytest.mark.parametrize("sent", [b"", b"GET /api/state HTTP/1.0\r\nHost: 127.0.0.1\r\n"],
                         ids=["nothing", "half-a-request"])
def test_an_idle_connection_holds_up_no_other_client(serving, sent):
    _, port = serving()
    with connect(port) as idle:
        idle.sendall(sent)
        status, body = get(port)  # accepted after the idle one, which is still open
        assert status == 200 and json.loads(body)["depth"] == 0
        status, body = get(port, "/api/step", b'{"action": "Produce"}')
        assert status == 200 and json.loads(body)["path"] == ["Produce"]


@pytest.mark.parametrize("trickle", [False, True], ids=["idle", "a-byte-at-a-time"])
def test_a_connection_that_does_not_finish_its_request_is_cut_off(serving, trickle):
    """Idle, or sending a byte every 50 ms for ever (each receive on its own would never time
    out): answered 408 and closed once its time is up."""
    srv, port = serving(request_seconds=0.5)
    header = b"GET /api/state HTTP/1.0\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100000
    with connect(port) as sock:
        end = time.monotonic() + GUARD
        sent = 0
        while not select.select([sock], [], [], 0.05)[0]:
            if time.monotonic() > end:
                pytest.fail("hung: the connection was never cut off")
            if trickle:
                try:
                    sock.sendall(header[sent:sent + 1])
                except (BrokenPipeError, ConnectionResetError):
                    break
                sent += 1
        status, error = one_line_error(read_all(sock))
    assert status == 408 and "did not arrive within 0.5 s" in error
    wait_for(lambda: srv.connections == 0, "the connection's slot freed")


def test_concurrent_changes_each_answer_with_the_state_they_made(serving, monkeypatch):
    """Clients jumping to different states of the trace at once, others reading: each change
    and the state it answers with are one step of the session (a change made slow here, so
    that another would land between the two if they were apart)."""
    srv, port = serving(trace=True)
    session = srv.RequestHandlerClass.session
    real = session.jump

    def slow_jump(index):
        real(index)
        time.sleep(0.002)

    monkeypatch.setattr(session, "jump", slow_jump)
    wrong: list[str] = []

    def jumper(index: int) -> None:
        for _ in range(15):
            status, body = get(port, "/api/jump", json.dumps({"index": index}).encode())
            got = json.loads(body)
            if status != 200 or got["depth"] != index or got["trace"]["at"] != index:
                wrong.append(f"jump to {index}: {status} {str(got)[:120]}")

    def reader() -> None:
        for _ in range(15):
            status, body = get(port)
            got = json.loads(body)
            if status != 200 or len(got["path"]) != got["depth"]:
                wrong.append(f"state: {status} {str(got)[:120]}")

    threads = [threading.Thread(target=jumper, args=(i,)) for i in (2, 4, 6, 8)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GUARD * 4)
    assert not any(t.is_alive() for t in threads), "a client never got its answers"
    assert wrong == []


def test_a_client_that_stops_reading_its_answer_is_dropped(serving, capfd, monkeypatch):
    """An answer larger than the connection's buffers, to a client that never reads: given up
    after the send time, the slot freed, nothing said."""
    srv, port = serving(send_seconds=0.5)
    monkeypatch.setattr(srv.RequestHandlerClass.session, "view",
                        lambda: "<!DOCTYPE html>" + "x" * (16 << 20))
    capfd.readouterr()
    srv.ended.clear()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(GUARD)
    with sock:
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"GET /view HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        assert srv.ended.wait(GUARD), "the server never gave up on the connection"
        status, _ = get(port)
        assert status == 200
    wait_for(lambda: srv.connections == 0, "the slots freed")
    assert capfd.readouterr().err == ""


def test_connections_past_the_bound_are_answered_503_at_once(serving):
    srv, port = serving(max_connections=2, request_seconds=GUARD * 2)
    held = [connect(port) for _ in range(2)]
    try:
        wait_for(lambda: srv.connections == 2, "both idle connections accepted")
        answer = exchange(port, b"GET /api/state HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        status, error = one_line_error(answer)
        assert status == 503 and "serving 2 connections" in error
    finally:
        for sock in held:
            sock.close()
    wait_for(lambda: srv.connections == 0, "the idle connections' slots freed")
    status, body = get(port)
    assert status == 200 and json.loads(body)["depth"] == 0


# -- bodies -------------------------------------------------------------------------------------


def test_json_nested_too_deep_is_refused_before_it_is_parsed(serving):
    _, port = serving()
    for deep in (b"[" * 32000 + b"]" * 32000,  # under the size limit
                 b'{"action": ' + b"[" * 20000 + b"]" * 20000 + b"}",
                 b'{"action": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}",
                 b"[" * 60000):  # not even closed
        status, body = get(port, "/api/step", deep)
        assert status == 400, body[:200]
        assert "deep" in json.loads(body)["error"]
    # as deep as allowed: parsed, and refused for what it says; brackets in strings are text
    limit = explorer_server.MAX_DEPTH
    at_limit = b'{"action": ' + b"[" * (limit - 1) + b"]" * (limit - 1) + b"}"
    status, body = get(port, "/api/step", at_limit)
    assert status == 400 and "label or an index" in json.loads(body)["error"]
    status, body = get(port, "/api/step", json.dumps({"action": "[{" * 10000}).encode())
    assert status == 400 and "unknown action" in json.loads(body)["error"]
    status, body = get(port, "/api/step", b'{"action": "Produce"}')
    assert status == 200 and json.loads(body)["path"] == ["Produce"]


def _depth(value) -> int:
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


@settings(max_examples=200, derandomize=True, deadline=None)
@given(value=st.recursive(
    st.none() | st.integers() | st.text(st.sampled_from('[]{}"\\ab')),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(st.sampled_from('[]{}"\\ab'), max_size=4), inner, max_size=3),
    max_leaves=40), limit=st.integers(0, 6))
def test_the_depth_check_is_the_nesting_json_parses(value, limit):
    """Brackets in strings (escaped quotes and backslashes beside them) do not count; every
    array and object does."""
    assert explorer_server.too_deep(json.dumps(value), limit) == (_depth(value) > limit)


def test_a_body_far_over_the_limit_sent_in_full_gets_its_413(serving):
    """The client sends the whole body (more than the connection's buffers hold) before it
    reads: the server reads and drops it, so the client reads the 413 rather than a reset."""
    _, port = serving()
    status, body = get(port, "/api/step", b"{" + b" " * (8 << 20) + b"}")
    assert status == 413 and "at most 65536 bytes" in json.loads(body)["error"]


def test_a_body_in_chunks_is_refused_411(serving):
    _, port = serving()
    answer = exchange(port, b"POST /api/step HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                            b"\r\n15\r\n{\"action\": \"Produce\"}\r\n0\r\n\r\n")
    status, error = one_line_error(answer)
    assert status == 411 and "Content-Length" in error


def test_a_body_shorter_than_its_length_is_refused_400(serving):
    _, port = serving()
    answer = exchange(port, b"POST /api/back HTTP/1.0\r\nHost: 127.0.0.1\r\n"
                            b"Content-Type: application/json\r\nContent-Length: 50\r\n\r\n{}")
    status, error = one_line_error(answer)
    assert status == 400 and "ended after 2 of its 50 bytes" in error


@pytest.mark.parametrize("given", ["ten", "-5", "+5", "1_0", "0x10", "\u00b2", "5, 5"])
def test_a_content_length_that_is_not_a_number_of_bytes_is_refused_400(serving, given):
    _, port = serving()
    answer = exchange(port, b"POST /api/back HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: "
                            b"application/json\r\nContent-Length: " + given.encode("latin-1")
                      + b"\r\n\r\n{}")
    status, error = one_line_error(answer)
    assert status == 400 and "not a number of bytes" in error


# -- a client that goes away --------------------------------------------------------------------


def _reset(sock: socket.socket) -> None:
    """Close with a reset (SO_LINGER 0), as a client killed mid-request does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


@pytest.mark.parametrize("when", ["mid-answer", "mid-body"])
def test_a_client_that_goes_away_leaves_no_traceback(serving, capfd, monkeypatch, when):
    srv, port = serving()
    gone = threading.Event()
    if when == "mid-answer":  # the answer is written after the client has reset the connection
        session = srv.RequestHandlerClass.session
        real = session.state

        def state():
            assert gone.wait(GUARD)
            return real()

        monkeypatch.setattr(session, "state", state)
        request = b"GET /api/state HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
    else:  # the body is being read when the client resets the connection
        request = (b"POST /api/step HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: "
                   b"application/json\r\nContent-Length: 100\r\n\r\n{\"act")
    capfd.readouterr()
    srv.ended.clear()
    sock = connect(port)
    sock.sendall(request)
    time.sleep(0.05)  # lets the server start on it (either order is a disconnect)
    _reset(sock)
    gone.set()
    assert srv.ended.wait(GUARD), "the server never finished with the connection"
    err = capfd.readouterr().err
    assert "Traceback" not in err and err == ""
    status, _ = get(port)  # and it serves on
    assert status == 200


# -- any request --------------------------------------------------------------------------------

# The default tier sends the same examples every run; HWCHECK_FUZZ_EXAMPLES=N sends N fresh ones.
_LONG = os.environ.get("HWCHECK_FUZZ_EXAMPLES")
TEXT = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)),
               max_size=30)
METHOD = st.one_of(st.sampled_from(["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS",
                                    "PATCH", "CONNECT", "TRACE"]),
                   st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1,
                           max_size=12))
PATH = st.one_of(st.sampled_from(ROUTES),
                 st.builds(lambda r, q: f"{r}?{q}", st.sampled_from(ROUTES), TEXT),
                 st.builds(lambda t: "/" + t.replace(" ", "%20"), TEXT),
                 st.sampled_from(["*", "http://127.0.0.1/api/state", "//api/state",
                                  "/api/state/../api/state", "/%00", "/" + "a" * 70000]))
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 10**30) | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12)
BODY = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda k, v: json.dumps({k: v}).encode(),
              st.sampled_from(["action", "index", "initial", "other"]),
              st.one_of(JSON_VALUE, st.sampled_from(["Produce", "Elect(0)", "FetchResponse(1)",
                                                     "NaN"]), st.integers(-3, 40))),
    st.builds(lambda n, o, c: (o * n + c * n).encode(),
              st.integers(1, 64) | st.integers(900, 30000),
              st.sampled_from(["[", "{\"a\":"]), st.sampled_from(["]", "}"])),
    JSON_VALUE.map(lambda v: json.dumps(v).encode()))


POST_ROUTES = [r for r in ROUTES if r.startswith("/api/") and r != "/api/state"]
HOSTILE = ["method", "path", "version", "host", "type", "length", "headers", "body"]


@st.composite
def requests(draw) -> bytes:
    """A well-formed request to one of the routes (a JSON body for a POST), then up to three of
    its parts made hostile: the method, the path, the version, Host, Content-Type,
    Content-Length, extra headers, the body."""
    path = draw(st.sampled_from(ROUTES))
    method = "POST" if path in POST_ROUTES else draw(st.sampled_from(["GET", "HEAD"]))
    body = draw(BODY) if method == "POST" else b""
    version = "HTTP/1.0"
    host: str | None = "127.0.0.1:8765"
    ctype: str | None = "application/json" if method == "POST" else None
    length: str | None = str(len(body)) if method == "POST" else None
    extra: list[tuple[str, str]] = []
    for part in draw(st.sets(st.sampled_from(HOSTILE), max_size=3)):
        if part == "method":
            method = draw(METHOD)
        elif part == "path":
            path = draw(PATH)
        elif part == "version":
            version = "HTTP/1.1"
        elif part == "host":
            host = draw(st.sampled_from(["localhost", "[::1]:80", "evil.example", "", None,
                                         "127.0.0.1:x:y", "[::1"]) | TEXT)
        elif part == "type":
            ctype = draw(st.sampled_from(["application/json; charset=utf-8", "APPLICATION/JSON",
                                          "text/plain", "", None]) | TEXT)
        elif part == "length":
            length = draw(st.sampled_from([None, str(len(body) + 7), str(max(len(body) - 3, 0)),
                                           str(10**12), f"{len(body)}, {len(body)}", "ten",
                                           "-5", "+5", "1_0", "\u00b2", "0x10", ""]) | TEXT)
        elif part == "headers":
            extra = draw(st.lists(st.tuples(
                st.sampled_from(["Connection", "Transfer-Encoding", "Expect", "X-Any", "Accept"])
                | st.text(st.characters(min_codepoint=33, max_codepoint=126,
                                        blacklist_characters=":"), min_size=1, max_size=10),
                st.sampled_from(["keep-alive", "close", "chunked", "100-continue", "identity"])
                | TEXT), min_size=1, max_size=4))
        else:
            body = draw(st.binary(max_size=300) | BODY)
    headers = [(k, v) for k, v in (("Host", host), ("Content-Type", ctype),
                                   ("Content-Length", length)) if v is not None] + extra
    head = f"{method} {path} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)
    return head.encode("utf-8") + b"\r\n" + body


def _post(body: bytes) -> bytes:
    return (b"POST /api/step HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body


@settings(max_examples=int(_LONG or 150), derandomize=not _LONG, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(raw=requests(), gone=st.sampled_from([False, False, False, True]))
@example(raw=_post(b"[" * 30000 + b"]" * 30000), gone=False)  # deep past the recursion limit
@example(raw=_post(b'{"action": "Produce"}'), gone=True)  # the client resets at once
@example(raw=_post(b"{}").replace(b"Content-Length: 2", b"Content-Length: \xb2"), gone=False)
def test_no_request_gets_a_5xx_or_a_traceback(fuzzed, capfd, raw, gone):
    port = fuzzed.server_address[1]
    capfd.readouterr()
    fuzzed.ended.clear()
    if gone:  # the client resets the connection right after its request
        sock = connect(port)
        sock.sendall(raw[:1 << 16])
        _reset(sock)
    else:
        answer = exchange(port, raw)
        status, _, _ = parse(answer)
        assert 200 <= status < 300 or 400 <= status < 500, answer[:300]
        if status >= 400 and not raw.startswith(b"HEAD "):
            one_line_error(answer)
    assert fuzzed.ended.wait(GUARD), "the server never finished with the connection"
    err = capfd.readouterr().err
    assert err == "", err  # no traceback, nor any line: every fault here is the client's
