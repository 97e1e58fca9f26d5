"""Keyboard focus that survives a rerun.

In Streamlit 1.67 a key press that reruns the script can leave focus on the page's ``<body>``: the control is
drawn again (a tab strip, a download button), or it is gone (a lesson's
Next to another page, an expander's button that closes it). A screen reader then starts again from the top.
After a key press, this script watches focus until a few seconds after the run it started (not after later runs of
a timed fragment); if it falls to ``<body>`` with no click since,
it goes back to the same control once it is there again (same widget key, role and name), without scrolling; else
(the run over, and the control not drawn again or disabled) to the control nearest it: the one before a disabled
control, or the open tab (else the first control) of the keyed part of the page it was in; else to the page's
title. Those are scrolled into view (a title focused out of sight showed no focus at all). Focus left on a tab strip
itself (a strip that scrolls can hold it: after End opened its last tab, a slow run's redraw once left it there, no
tab showing focus) goes to the strip's open tab. A click never moves focus. Our own constant script, installed once
per page load.
"""

from __future__ import annotations

import streamlit as st

KEEP_FOCUS = """<script data-bertlens="keep-focus">
(() => {
  if (window.bertlensFocus) return;
  window.bertlensFocus = true;
  const WATCH_MS = 6000, EVERY_MS = 150, QUIET_TICKS = 4;
  const keyOf = (el) => [...(el.closest?.('[class*="st-key-"]')?.classList || [])].find((c) => c.startsWith("st-key-"));
  const nameOf = (el) => (el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 120);
  const usable = (el) => !el.disabled && el.getAttribute("aria-disabled") !== "true"
    && el.checkVisibility({visibilityProperty: true});  // not in a collapsed sidebar (hidden: layout.py)
  const matching = (want) => [...document.querySelectorAll(want.key ? `.${CSS.escape(want.key)} *` : `[role="${want.role}"]`)]
    .filter((el) => el.getAttribute("role") === want.role && el.tagName === want.tag && nameOf(el) === want.name);
  const same = (want) => matching(want).find(usable);
  const FOCUSABLE = 'button, input, select, textarea, summary, a[href], [tabindex]:not([tabindex="-1"])';
  const focusables = (root) => [...root.querySelectorAll(FOCUSABLE)].filter(usable);
  // The control is there but disabled (a lesson's Next on its last step): the usable control just before it
  // (← Back), else just after. Its part of the page is there without it (Find the head opened another tab): that
  // part's open tab, else its first control.
  const near = (want) => {
    const lost = matching(want)[0];
    if (lost) {
      const all = focusables(document);
      const before = all.filter((el) => el.compareDocumentPosition(lost) & Node.DOCUMENT_POSITION_FOLLOWING);
      return before.at(-1) || all.find((el) => el.compareDocumentPosition(lost) & Node.DOCUMENT_POSITION_PRECEDING);
    }
    for (const key of want.within) {
      const part = document.querySelector(`.${CSS.escape(key)}`);
      const target = part && (part.querySelector('[role="tab"][aria-selected="true"]') || focusables(part)[0]);
      if (target && usable(target)) return target;
    }
    return null;
  };
  let watch = null;
  window.addEventListener("pointerdown", () => { watch = null; }, true);
  window.addEventListener("keydown", (event) => {
    const el = document.activeElement;
    if (!event.isTrusted || !el || el === document.body) return;
    const within = [];  // the keyed parts of the page around it, nearest first
    for (let part = el.parentElement?.closest('[class*="st-key-"]'); part; part = part.parentElement?.closest('[class*="st-key-"]')) {
      within.push(keyOf(part));
    }
    watch = {key: keyOf(el), within: within.filter((key) => key !== keyOf(el)), role: el.getAttribute("role"),
             tag: el.tagName, name: nameOf(el), until: Date.now() + WATCH_MS};
  }, true);
  const idle = () => document.querySelector('[data-testid="stApp"]')?.getAttribute("data-test-script-state") === "notRunning";
  setInterval(() => {
    if (!watch) return;
    // A slow run: the watch lasts until a while after it. Only the run the key press started: a page's timed fragment
    // (a live class's, every second or two) would else keep it forever, and focus would jump whenever a later run
    // took the control away (a student's answer box, gone at the teacher's reveal minutes later).
    // (Its end: idle for QUIET_TICKS in a row, not the instant between a page switch's two runs.)
    if (!idle()) { if (!watch.ended) watch.until = Date.now() + WATCH_MS; watch.ran = true; watch.quiet = 0; }
    else if (watch.ran && (watch.quiet = (watch.quiet || 0) + 1) >= QUIET_TICKS) watch.ended = true;
    if (Date.now() > watch.until) { watch = null; return; }  // a few seconds after the key press, no longer
    const strip = document.activeElement;
    if (strip?.getAttribute("role") === "tablist" && document.hasFocus()) {  // the strip itself: no tab shows focus
      const open = strip.querySelector('[role="tab"][aria-selected="true"]');
      if (open && usable(open)) open.focus();  // scrolled into the strip's view
      return;
    }
    if (document.activeElement !== document.body || !document.hasFocus()) return;
    const again = same(watch);
    if (again) { again.focus({preventScroll: true}); watch.idle = 0; return; }  // where the student was
    watch.idle = idle() ? (watch.idle || 0) + 1 : 0;
    if (watch.idle < 3) return;  // the run may still draw it again
    const nearby = near(watch);
    watch = null;
    if (nearby) { nearby.focus(); return; }  // scrolled into view if need be (below the header: layout.py)
    const title = document.querySelector('[data-testid="stMain"] h1');
    if (title) { title.setAttribute("tabindex", "-1"); title.focus(); }
  }, EVERY_MS);
})();
</script>"""


def keep_focus() -> None:
    """Install the script (invisible); call once per run, e.g. in the sidebar of app.py."""
    st.html(KEEP_FOCUS, unsafe_allow_javascript=True)
