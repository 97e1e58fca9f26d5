"""The browser-history script (``components.state.history``) run in Node against a stand-in ``window``/``history``:
one entry per student action, none without one, and Back or Forward marks the address it opens.

The browser tests (tests/browser) drive it in Chromium end to end; these run in a second and name the rule broken.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from components.state.history import NO_HISTORY_ENTRY, ONE_ENTRY_PER_ACTION
from components.state.widgets import FROM_HISTORY

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs Node.js to run the page's script")

# A window with just what the script touches; ``steps`` is a list of [action, argument] run in order, and the
# entries the browser holds are printed at the end (each push adds one, each replace rewrites the last).
HARNESS = r"""
const listeners = {};
const entries = [OPENED];  // the address the page was opened at
const states = [null];  // a document's first entry has no state; Streamlit's pushes and replaces give {}
const location = {get href() { return entries[at]; }};
const performance = {getEntriesByType: (type) => (type === "navigation" ? [{name: OPENED}] : [])};
let at = 0;
let left = false;  // Back past this page's first entry: the browser leaves the page
const history = {
  get state() { return states[at]; },
  pushState(state, title, url) {
    entries.splice(at + 1); states.splice(at + 1);
    entries.push(new URL(url, location.href).href); states.push(state); at += 1;
  },
  replaceState(state, title, url) { entries[at] = new URL(url, location.href).href; states[at] = state; },
  back() { if (at === 0) left = true; else { at -= 1; window.dispatchEvent(new PopStateEvent("popstate", {})); } },
};
class PopStateEvent { constructor(type, init) { this.type = type; this.state = init.state; } }
const window = {
  addEventListener(type, fn) { (listeners[type] ||= []).push(fn); },
  dispatchEvent(event) { (listeners[event.type] || []).forEach((fn) => fn(event)); },
};
const target = (quiet) => ({closest: (selector) => (quiet && selector === ".st-key-QUIET" ? {} : null)});
globalThis.window = window; globalThis.history = history; globalThis.location = location;
globalThis.PopStateEvent = PopStateEvent; globalThis.performance = performance;
for (const url of BEFORE) history.pushState({}, "", url);  // Streamlit's own, before the script is installed
SCRIPT
SCRIPT
const steps = STEPS;
for (const [action, argument] of steps) {
  if (action === "click" || action === "key") {
    const type = action === "click" ? "pointerdown" : "keydown";
    (listeners[type] || []).forEach((fn) => fn({isTrusted: true, target: target(argument === "quiet")}));
  } else if (action === "push" || action === "replace") {
    history[action + "State"]({}, "", argument);
  } else if (action === "back") {
    history.back();
  }
}
console.log(JSON.stringify({entries, at, left}));
"""


def browse(*steps: tuple[str, str], opened: str = "http://app/tokenizer", before: tuple[str, ...] = ()) -> dict:
    """Run the script (installed twice, as two runs of a page would) through ``steps`` on a page opened at
    ``opened``, whose address Streamlit changed to each of ``before`` before the script was installed; the
    history it leaves."""
    body = ONE_ENTRY_PER_ACTION.split(">", 1)[1].rsplit("</script>", 1)[0]
    program = (
        HARNESS.replace("QUIET", NO_HISTORY_ENTRY)
        .replace("SCRIPT\nSCRIPT", body + "\n" + body)
        .replace("STEPS", json.dumps([list(s) for s in steps]))
        .replace("OPENED", json.dumps(opened))
        .replace("BEFORE", json.dumps(list(before)))
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


BARE = "http://app/fill_mask?lesson=discover&step=2"
VIEW = "http://app/fill_mask?text=The+%5BMASK%5D+sat.&lesson=discover&step=2"


def test_back_passes_over_a_first_entry_rewritten_before_the_script_was_there():
    """A bare lesson link's first run opens the step's view before the script is installed: Streamlit pushes it,
    and Back from the view landed on the bare link, which reopened the same view (one Back press did nothing)."""
    history = browse(("back", ""), opened=BARE, before=(VIEW,))
    assert history["left"] and history["entries"] == [BARE, VIEW]  # gone to the page before, the entry unmarked
    half_way = "http://app/fill_mask?lesson=discover&step=2&text=The+%5BMASK%5D+sat."  # the sentence came first
    history = browse(("back", ""), opened=BARE, before=(half_way, VIEW))
    assert history["left"] and history["entries"] == [BARE, half_way, VIEW]


def test_back_to_a_first_entry_stays_when_the_page_did_not_rewrite_it_or_returned_to_it():
    # The script was there first: the rewrite replaced the first entry, and Back from the next view reaches it
    history = browse(("push", VIEW), ("click", ""), ("push", "?x=1"), ("back", ""), opened=BARE)
    assert not history["left"] and history["at"] == 0 and history["entries"][0].startswith(VIEW + f"&{FROM_HISTORY}")
    history = browse(("click", ""), ("push", "?other=1"), ("back", ""), opened=VIEW)
    assert not history["left"] and history["at"] == 0 and FROM_HISTORY in history["entries"][0]
    # Entries after the first with the same address (a later step back at the bare link's address) are views
    history = browse(
        ("click", ""), ("push", BARE), ("click", ""), ("push", "?x=1"), ("back", ""), opened=BARE, before=(VIEW,)
    )
    assert not history["left"] and history["at"] == 2 and FROM_HISTORY in history["entries"][2]
