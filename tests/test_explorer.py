"""The explorer's session and web server, without a browser (tests/test_browser.py drives the page
in Chromium): steps as the interpreter takes them, a loaded trace, and a 4xx for every bad
request, never a traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from helpers import kafka, started

from hwcheck.checker.explorer.server import serve
from hwcheck.checker.explorer.session import Session, SessionError
from hwcheck.checker.semantics.interp import Interpreter

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "counterexamples" / "hw-truncation" / "CommittedNotLost.itf.json"


@pytest.fixture(scope="module")
def spec():
    return kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")


@pytest.fixture
def server(spec):
    session = Session(spec)
    session.load_trace_file(TRACE)
    srv = serve(session, "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield session, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def request(base, method, path, body=None, ctype="application/json", headers=None):
    data = None if body is None else (body if isinstance(body, bytes) else
                                      json.dumps(body).encode())
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers or {})
    if data is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read()


def test_the_enabled_actions_are_the_interpreters(spec):
    s = Session(spec)
    interp = Interpreter(spec)
    for _ in range(6):  # a few steps along the first enabled action each time
        state = s.state()
        want = [inst.label for inst, _ in interp.successors(s.current)]
        assert [a["label"] for a in state["actions"] if a["enabled"]] == want
        assert not any("disagreement" in a for a in state["actions"])
        s.step(want[-1])
    assert s.state()["depth"] == 6


def test_a_step_gives_the_interpreters_successor_and_back_undoes_it(spec):
    s = Session(spec)
    interp = Interpreter(spec)
    before = s.current.copy()
    s.step("Produce")
    nxt = interp.step(interp.instance("Produce"), before)
    assert np.array_equal(s.current, nxt)
    assert s.state()["changed"] == ["log"]
    s.back()
    assert np.array_equal(s.current, before)
    with pytest.raises(SessionError, match="already at the first state"):
        s.back()


def test_violated_properties_are_marked(spec):
    s = Session(spec)
    s.load_trace_file(TRACE)
    assert s.state()["properties"]["invariants"] == []
    s.jump(8)
    props = s.state()["properties"]
    assert props["invariants"] == ["CommittedNotLost", "AckedNotLost"]
    assert props["healthy"] is False and "LeaderChanged" in props["reached"]
    assert s.state()["trace"]["at"] == 8


def test_a_trace_file_names_its_own_spec():
    s = Session.from_trace_file(TRACE)
    assert s.spec.params["truncation"] == "hw"
    assert s.state()["trace"]["steps"][0] == "initial"
    assert len(s.state()["trace"]["steps"]) == 9


@pytest.mark.slow  # KIP-279's kernel, which no other fast test compiles
def test_a_trace_of_another_configuration_does_not_load():
    s = Session(kafka(replicas=2, max_offset=2, max_epoch=3, truncation="kip-279"))
    with pytest.raises(SessionError, match="does not replay"):
        s.load_trace_file(TRACE)


def test_the_server_steps_and_jumps(server):
    session, base = server
    status, ctype, body = request(base, "GET", "/")
    assert status == 200 and ctype.startswith("text/html") and b'id="actions"' in body
    status, _, body = request(base, "POST", "/api/step", {"action": "Produce"})
    assert status == 200 and json.loads(body)["path"] == ["Produce"]
    status, _, body = request(base, "POST", "/api/jump", {"index": 8})
    assert status == 200 and json.loads(body)["properties"]["invariants"]
    status, ctype, body = request(base, "GET", "/view?v=3")
    assert status == 200 and b"<table" in body and b'class="timeline"' in body
    status, _, body = request(base, "POST", "/api/reset", {})
    assert status == 200 and json.loads(body)["depth"] == 0


@pytest.mark.parametrize("method, path, body, ctype, status, message", [
    ("GET", "/nope", None, None, 404, "no such page"),
    ("GET", "/api/step", None, None, 405, "takes POST"),
    ("POST", "/api/state", {}, "application/json", 405, "takes GET"),
    ("PUT", "/api/step", {}, "application/json", 405, "method PUT not allowed"),
    ("DELETE", "/", None, None, 405, "not allowed"),
    ("POST", "/api/step", {"action": "Nope"}, "application/json", 400, "unknown action"),
    ("POST", "/api/step", {"action": 999}, "application/json", 400, "no action instance"),
    ("POST", "/api/step", {"action": [1]}, "application/json", 400, "label or an index"),
    ("POST", "/api/step", {}, "application/json", 400, "must name an action"),
    ("POST", "/api/step", {"action": "FetchResponse(1)"}, "application/json", 409,
     "not enabled"),
    ("POST", "/api/step", b"{not json", "application/json", 400, "not JSON"),
    ("POST", "/api/step", b"[1, 2]", "application/json", 400, "JSON object"),
    ("POST", "/api/step", b"\xff\xfe", "application/json", 400, "not JSON"),
    ("POST", "/api/step", {"action": "Produce"}, "text/plain", 415, "must be JSON"),
    ("POST", "/api/jump", {"index": 99}, "application/json", 400, "states 0..8"),
    ("POST", "/api/jump", {"index": "3"}, "application/json", 400, "states 0..8"),
    ("POST", "/api/back", {}, "application/json", 409, "already at the first state"),
])
def test_bad_requests_get_a_4xx_and_one_line(server, method, path, body, ctype, status,
                                              message):
    _, base = server
    got, rtype, raw = request(base, method, path, body, ctype or "application/json")
    assert got == status
    assert rtype == "application/json"
    text = raw.decode()
    assert message in json.loads(text)["error"]
    assert "Traceback" not in text and text.count("\n") == 1


def test_requests_addressed_elsewhere_are_refused(server):
    """DNS rebinding: a page from another name that resolves to 127.0.0.1 gets nothing."""
    _, base = server
    status, _, body = request(base, "GET", "/api/state", headers={"Host": "evil.example:80"})
    assert status == 403 and b"loopback" in body
    status, _, _ = request(base, "GET", "/api/state",
                           headers={"Host": f"localhost:{base.rsplit(':', 1)[1]}"})
    assert status == 200


def test_an_oversized_body_is_refused(server):
    _, base = server
    status, _, body = request(base, "POST", "/api/step", b"{" + b" " * 70000 + b"}")
    assert status == 413 and b"at most" in body


def test_a_disagreement_between_kernel_and_interpreter_is_shown(spec, monkeypatch):
    s = Session(spec)
    real = s.interp.step

    def wrong(inst, row):
        out = real(inst, row)
        if out is not None and inst.label == "Produce":
            out = out.copy()
            out[0] = 0
        return out

    monkeypatch.setattr(s.interp, "step", wrong)
    [produce] = [a for a in s.state()["actions"] if a["label"] == "Produce"]
    assert "disagree" in produce["disagreement"]


def test_the_explore_command_serves_a_trace_and_stops_on_ctrl_c():
    cmd = [sys.executable, "-m", "hwcheck.checker", "explore", "--trace", str(TRACE),
           "--port", "0"]
    with started(cmd, stderr=subprocess.PIPE, text=True, cwd=ROOT) as proc:
        line = proc.stderr.readline()  # the URL, once it listens
        assert line.startswith("explore: KafkaHW R=2 M=2 E=3 truncation=hw"), line
        base = line.split("serving ")[1].split(" ")[0].rstrip("/")
        assert base.startswith("http://127.0.0.1:")
        status, _, body = request(base, "GET", "/api/state")
        assert status == 200 and json.loads(body)["trace"]["length"] == 8
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()  # to its end: the process has stopped
        proc.wait()
    assert proc.returncode == 0 and err.strip().endswith("explore: stopped")


def test_the_explore_command_refuses_a_trace_that_does_not_replay(tmp_path):
    bad = tmp_path / "t.itf.json"
    bad.write_text("{}")
    res = subprocess.run([sys.executable, "-m", "hwcheck.checker", "explore", "--trace", str(bad),
                          "--port", "0"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 2
    assert res.stderr.startswith("hwcheck: error: ") and len(res.stderr.strip().splitlines()) == 1


def test_a_protocol_without_views_is_drawn_as_a_table_of_variables():
    from engine_contract import protocol_spec

    s = Session(protocol_spec("die_hard.py", {}))
    first = s.state()["actions"][0]["label"]
    s.step(first)
    page = s.view()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert page.count("<tr") == len(s.spec.variables) and 'class="changed"' in page
