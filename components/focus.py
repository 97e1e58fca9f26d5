"""Keyboard focus that survives a rerun.

In Streamlit 1.67 a key press that reruns the script can leave focus on the page's ``<body>``: the control is
drawn again (a tab strip, a download button), or it is gone (a lesson's
Next to another page, an expander's button that closes it). A screen reader then starts again from the top.
After a key press, this script watches focus until a few seconds after the run it started; if it falls to ``<body>`` with no click since,
it goes back to the same control once it is there again (same widget key, role and name), else (the run over,
and the control not drawn again) to the page's title, without scrolling either way. A click never moves focus. Our own constant script, installed once per page load.
"""

from __future__ import annotations

import streamlit as st

KEEP_FOCUS = """<script data-bertlens="keep-focus">
(() => {
  if (window.bertlensFocus) return;
  window.bertlensFocus = true;
  const WATCH_MS = 6000, EVERY_MS = 150;
  const keyOf = (el) => [...(el.closest?.('[class*="st-key-"]')?.classList || [])].find((c) => c.startsWith("st-key-"));
  const nameOf = (el) => (el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 120);
  const same = (want) => [...document.querySelectorAll(want.key ? `.${CSS.escape(want.key)} *` : `[role="${want.role}"]`)]
    .find((el) => el.getAttribute("role") === want.role && el.tagName === want.tag && nameOf(el) === want.name
      && !el.disabled && el.getAttribute("aria-disabled") !== "true" && el.checkVisibility());
  let watch = null;
  window.addEventListener("pointerdown", () => { watch = null; }, true);
  window.addEventListener("keydown", (event) => {
    const el = document.activeElement;
    if (!event.isTrusted || !el || el === document.body) return;
    watch = {key: keyOf(el), role: el.getAttribute("role"), tag: el.tagName, name: nameOf(el), until: Date.now() + WATCH_MS};
  }, true);
  const idle = () => document.querySelector('[data-testid="stApp"]')?.getAttribute("data-test-script-state") === "notRunning";
  setInterval(() => {
    if (!watch) return;
    if (!idle()) watch.until = Date.now() + WATCH_MS;  // a slow run: the watch lasts until a while after it
    if (Date.now() > watch.until) { watch = null; return; }  // a few seconds after the key press, no longer
    if (document.activeElement !== document.body || !document.hasFocus()) return;
    const again = same(watch);
    if (again) { again.focus({preventScroll: true}); watch.idle = 0; return; }  // where the student was
    watch.idle = idle() ? (watch.idle || 0) + 1 : 0;
    if (watch.idle < 3) return;  // the run may still draw it again
    watch = null;
    const title = document.querySelector('[data-testid="stMain"] h1');
    if (title) { title.setAttribute("tabindex", "-1"); title.focus({preventScroll: true}); }
  }, EVERY_MS);
})();
</script>"""


def keep_focus() -> None:
    """Install the script (invisible); call once per run, e.g. in the sidebar of app.py."""
    st.html(KEEP_FOCUS, unsafe_allow_javascript=True)
