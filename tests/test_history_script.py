"""The browser-history script (``components.history``) run in Node against a stand-in ``window``/``history``:
one entry per student action, none without one, and Back or Forward marks the address it opens.

The browser tests (tests/browser) drive it in Chromium end to end; these run in a second and name the rule broken.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from components.history import NO_HISTORY_ENTRY, ONE_ENTRY_PER_ACTION
from components.state import FROM_HISTORY

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the page's script")

# A window with just what the script touches; ``steps`` is a list of [action, argument] run in order, and the
# entries the browser holds are printed at the end (each push adds one, each replace rewrites the last).
HARNESS = r"""
const listeners = {};
const entries = ["http://app/tokenizer"];
const location = {get href() { return entries[at]; }};
let at = 0;
const history = {
  state: null,
  pushState(state, title, url) { entries.splice(at + 1); entries.push(new URL(url, location.href).href); at += 1; },
  replaceState(state, title, url) { entries[at] = new URL(url, location.href).href; },
};
class PopStateEvent { constructor(type, init) { this.type = type; this.state = init.state; } }
const window = {
  addEventListener(type, fn) { (listeners[type] ||= []).push(fn); },
  dispatchEvent(event) { (listeners[event.type] || []).forEach((fn) => fn(event)); },
};
const target = (quiet) => ({closest: (selector) => (quiet && selector === ".st-key-QUIET" ? {} : null)});
globalThis.window = window; globalThis.history = history; globalThis.location = location;
globalThis.PopStateEvent = PopStateEvent;
SCRIPT
SCRIPT
const steps = STEPS;
for (const [action, argument] of steps) {
  if (action === "click" || action === "key") {
    const type = action === "click" ? "pointerdown" : "keydown";
    (listeners[type] || []).forEach((fn) => fn({isTrusted: true, target: target(argument === "quiet")}));
  } else if (action === "push" || action === "replace") {
    history[action + "State"](null, "", argument);
  } else if (action === "back") {
    at -= 1;
    window.dispatchEvent(new PopStateEvent("popstate", {state: null}));
  }
}
console.log(JSON.stringify({entries, at}));
"""


def browse(*steps: tuple[str, str]) -> dict:
    """Run the script (installed twice, as two runs of a page would) through ``steps``; the history it leaves."""
    body = ONE_ENTRY_PER_ACTION.split(">", 1)[1].rsplit("</script>", 1)[0]
    program = (
        HARNESS.replace("QUIET", NO_HISTORY_ENTRY)
        .replace("SCRIPT\nSCRIPT", body + "\n" + body)
        .replace("STEPS", json.dumps([list(s) for s in steps]))
    )
    done = subprocess.run([NODE, "-e", program], capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)


def test_one_action_is_one_entry_however_many_times_streamlit_changes_the_address():
    history = browse(("click", ""), ("push", "?a=1"), ("replace", "?a=1&b=2"), ("push", "?a=1&b=3"))
    assert history["entries"] == ["http://app/tokenizer", "http://app/tokenizer?a=1&b=3"]
    history = browse(("key", ""), ("replace", "?x=1"), ("key", ""), ("push", "?x=2"))
    assert history["entries"] == ["http://app/tokenizer", "http://app/tokenizer?x=1", "http://app/tokenizer?x=2"]


def test_no_entry_without_an_action_nor_for_an_address_that_does_not_change():
    assert browse(("push", "?opened=1"), ("push", "?opened=2"))["entries"] == ["http://app/tokenizer?opened=2"]
    history = browse(("click", ""), ("push", "http://app/tokenizer"), ("push", "?then=1"))
    assert history["entries"] == ["http://app/tokenizer", "http://app/tokenizer?then=1"]


def test_a_click_in_the_quiet_container_adds_no_entry():
    assert browse(("click", "quiet"), ("push", "?q=1"))["entries"] == ["http://app/tokenizer?q=1"]


def test_back_marks_the_address_it_opens_and_adds_no_entry():
    history = browse(("click", ""), ("push", "?a=1"), ("back", ""))
    assert history["at"] == 0
    assert history["entries"] == [f"http://app/tokenizer?{FROM_HISTORY}=1", "http://app/tokenizer?a=1"]
