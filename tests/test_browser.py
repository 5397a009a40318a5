"""What a person sees, in a real browser: a trace page, the suite report and the explorer, loaded
in headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven with Selenium).

The DOM is checked against the trace, the interpreter and the report's data, and a PNG
screenshot of each page is saved under the test output folder ($HWCHECK_TEST_OUTPUT, default
build/test-output/browser/). Where Chromium, its driver or Selenium is absent the tests are
skipped with the reason (CI installs them: .ci/run). The browser reaches only 127.0.0.1 and
file:// pages.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import kafka

from hwcheck.checker.cli.main import main
from hwcheck.checker.explorer.server import serve
from hwcheck.checker.explorer.session import Session
from hwcheck.checker.semantics.interp import Interpreter
from hwcheck.checker.traces import itf
from hwcheck.spec.kafka import views

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "counterexamples" / "hw-truncation" / "CommittedNotLost"
OUTPUT = Path(os.environ.get("HWCHECK_TEST_OUTPUT") or ROOT / "build" / "test-output") / "browser"

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
DRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401

    SELENIUM = True
except ImportError:
    SELENIUM = False

pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER and SELENIUM),
    reason="needs headless Chromium: apt-get install chromium chromium-driver, and "
           "pip install selenium (.ci/run installs them); missing: "
           + ", ".join(n for n, ok in (("chromium", CHROMIUM), ("chromedriver", DRIVER),
                                        ("selenium", SELENIUM)) if not ok))

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1300,1000")


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="hwcheck-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS + (f"--user-data-dir={profile}",):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def screenshot(driver, name: str) -> Path:
    """The whole page as a PNG under the test output folder."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    measure = ("return [Math.max(document.documentElement.scrollHeight, "
               "document.body.scrollHeight, document.body.getBoundingClientRect().bottom), "
               "window.outerHeight - window.innerHeight]")
    for _ in range(2):  # the window's own frame is not page; the page may reflow once
        height, frame = driver.execute_script(measure)
        driver.set_window_size(1300, min(max(int(height + frame) + 16, 600), 6000))
    path = OUTPUT / f"{name}.png"
    assert driver.save_screenshot(str(path))
    driver.set_window_size(1300, 1000)
    assert path.stat().st_size > 10_000
    return path


def wait(driver, condition, timeout: float = 15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: condition(d))


def by_css(driver, selector: str):
    from selenium.webdriver.common.by import By

    return driver.find_elements(By.CSS_SELECTOR, selector)


# -- a trace page --------------------------------------------------------------------------------


def test_a_trace_page_shows_every_step_and_the_violated_offset(browser):
    data = itf.read(TRACE.with_suffix(".itf.json"))
    spec = kafka(data["#meta"]["params"])
    trace = itf.from_itf(spec, data)
    _, flagged = views.explain(trace)
    browser.get(TRACE.with_suffix(".html").as_uri())
    assert browser.title == "CommittedNotLost violated in 8 steps (local engine)"
    rows = [tr for tr in by_css(browser, "table.trace tr") if by_css(tr, "td.step")]
    assert [by_css(r, "td.step .n")[0].text for r in rows] == [str(i) for i in
                                                                range(len(trace.states))]
    steps = by_css(browser, ".timeline svg g.step")
    assert [s.get_attribute("data-action") for s in steps] == \
        [a.split("(")[0] for a in trace.actions]
    svg = by_css(browser, ".timeline svg")[0]
    assert svg.size["width"] > 400 and svg.size["height"] > 100  # drawn, not empty
    last = rows[-1]
    bad = by_css(last, "td[data-replica] .box.bad")
    assert len(bad) == sum(len(v) for v in flagged.values()) > 0
    assert all(b.value_of_css_property("box-shadow").startswith("rgb(221, 0, 0)") for b in bad)
    assert by_css(rows[1], ".box.chg") and not by_css(browser, "td.changed")
    verdict = by_css(browser, ".verdict")[0].text
    assert "Here offset 0 was committed holding a record of epoch 1" in verdict
    screenshot(browser, "trace-page")


# -- the suite report ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_suite_report_links_every_trace(browser, tmp_path):
    for name in ("acks-1", "hw-truncation"):
        res = CliRunner().invoke(main, ["suite", "--scenario", name, "--out", str(tmp_path), "-q"])
        assert res.exit_code == 0, res.output
    browser.get((tmp_path / "index.html").as_uri())
    sections = by_css(browser, "section.scenario")
    ran = {s.get_attribute("data-scenario"): s for s in sections if s.get_attribute("data-ok")}
    assert set(ran) == {"acks-1", "hw-truncation"}
    assert all(s.get_attribute("data-ok") == "true" for s in ran.values())
    assert by_css(browser, "#summary")[0].get_attribute("data-verdict") == "ok"
    links = by_css(ran["hw-truncation"], "a.trace")
    assert len(links) == 3 * 3  # three violated properties, three files each
    screenshot(browser, "suite-report")
    page = next(a for a in links if a.get_attribute("href").endswith("LogsMatchBelowHw.html"))
    page.click()
    wait(browser, lambda d: d.title.startswith("LogsMatchBelowHw violated in 9 steps"))
    assert len(by_css(browser, "table.trace td.step")) == 10


# -- the explorer --------------------------------------------------------------------------------


@pytest.fixture
def explorer():
    spec = kafka(replicas=2, max_offset=2, max_epoch=3, truncation="hw")
    session = Session(spec)
    session.load_trace_file(TRACE.with_suffix(".itf.json"))
    srv = serve(session, "127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield spec, session, f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()


def _depth(driver) -> str:
    return driver.find_element("css selector", "body").get_attribute("data-depth")


def test_the_explorer_steps_as_the_interpreter_says(browser, explorer):
    spec, session, url = explorer
    interp = Interpreter(spec)
    browser.get(url)
    wait(browser, lambda d: by_css(d, "button.action"))
    enabled = [b.get_attribute("data-label") for b in by_css(browser, "button.action")
               if b.is_enabled()]
    start = interp.initial()
    assert enabled == [inst.label for inst, _ in interp.successors(start)]

    # a click takes the action: the page shows the interpreter's successor
    produce = next(b for b in by_css(browser, "button.action")
                   if b.get_attribute("data-label") == "Produce")
    produce.click()
    wait(browser, lambda d: _depth(d) == "1")
    want = interp.layout.to_dict(interp.step(interp.instance("Produce"), start))
    shown = {tr.get_attribute("data-var"): tr.find_element("css selector", "td.value").text
             for tr in by_css(browser, "#vars tr")}
    assert shown == {k: _show(v) for k, v in want.items()}
    assert [tr.get_attribute("data-var") for tr in by_css(browser, "#vars tr.changed")] == ["log"]
    assert [li.text for li in by_css(browser, "#path li")] == ["Produce"]

    # a disabled action cannot be clicked; back undoes the step
    disabled = [b for b in by_css(browser, "button.action") if not b.is_enabled()]
    assert disabled
    by_css(browser, "#back")[0].click()
    wait(browser, lambda d: _depth(d) == "0")

    # jump to the last state of the loaded trace: its violations are marked
    jumps = by_css(browser, "#trace a.jump")
    assert len(jumps) == 9
    jumps[-1].click()
    wait(browser, lambda d: _depth(d) == "8")
    violated = by_css(browser, "#violations li.violated")
    assert [li.get_attribute("data-property") for li in violated] == \
        ["CommittedNotLost", "AckedNotLost"]
    assert "here" in by_css(browser, "#trace li")[-1].get_attribute("class")
    assert by_css(browser, "#healthy")[0].text == "healthy: no"

    # the protocol's drawing of the path (the trace page's table and timeline) in the frame
    frame = by_css(browser, "iframe#view")[0]
    wait(browser, lambda d: "v=" in frame.get_attribute("src"))
    browser.switch_to.frame(frame)
    try:
        wait(browser, lambda d: len(by_css(d, "table.trace td.step")) == 9)
        assert len(by_css(browser, ".timeline g.step")) == 8
    finally:
        browser.switch_to.default_content()
    screenshot(browser, "explorer")

    # a refused request is said on the page, and nothing changes
    state = session.state()
    browser.execute_script(
        "return fetch('/api/step', {method: 'POST', headers: {'Content-Type': "
        "'application/json'}, body: JSON.stringify({action: 'Nope'})}).then(r => r.status)")
    assert session.state()["depth"] == state["depth"]


def _show(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + " ".join(_show(x) for x in v) + "]"
    return str(v)
