"""One browser-history entry per student action, so Back undoes what the student did.

Streamlit 1.67's frontend pushes an entry for every change a run makes to the address: a page switch with
a lesson step's view left the old page with the new step's parameters in between (Back showed one step's
question above another step's page), a page that wrote its settings on opening added steps nobody took,
and each lesson Next added 3-4 entries. This script makes the first entry after a click or key press a new
one and every later one of the same action replace it; without an action (a page opening, the browser's own
Back) nothing is added. Back and Forward mark the address they open (``FROM_HISTORY``), and the page shows
that view (``components.state.widgets.follow_history``); Back passes over the entries Streamlit pushed before the script
was installed (a bare lesson link's first run opening its step's view), which would only reopen the same view.
Our own constant script, installed once per page load.
"""

from __future__ import annotations

import streamlit as st

from components.state.params import FROM_HISTORY

NO_HISTORY_ENTRY = "_no_history_entry"  # the key of a container whose clicks and keys add no entry

ONE_ENTRY_PER_ACTION = """<script data-bertlens="one-history-entry-per-action">
(() => {
  if (window.bertlensHistory) return;
  window.bertlensHistory = true;
  let acted = false;
  const act = (event) => { if (event.isTrusted && !event.target.closest?.(".st-key-QUIET")) acted = true; };
  window.addEventListener("pointerdown", act, true);
  window.addEventListener("keydown", act, true);
  // Every entry this script makes or replaces is marked as ours in its state, and so is the view shown when it
  // is installed. An entry of this page that is not ours is older than that view: an address the first run
  // rewrote before the script was there (a bare lesson link opening its step's view, a bad parameter dropped),
  // which Streamlit kept as an entry of its own. Back passes over such entries: one press leaves a link's view
  // (a tab the link opened has nothing before them: there Back cannot leave).
  const ours = (state) => ({...(state ?? {}), bertlensEntry: true});
  const isOurs = () => history.state?.bertlensEntry === true;
  // The first change of the address after an action is a new entry, whichever way Streamlit makes it (a bound
  // widget's own change replaces the address); every other change replaces the entry.
  const push = history.pushState.bind(history);
  const replace = history.replaceState.bind(history);
  let onOurs = true;  // the entry shown is ours (false only while Back passes over older ones)
  const record = (state, title, url) => {
    const changes = url != null && new URL(url, location.href).href !== location.href;
    onOurs = true;
    if (!(acted && changes)) return replace(ours(state), title, url);
    acted = false;
    return push(ours(state), title, url);
  };
  replace(ours(history.state), "", location.href);
  // Back or Forward: Streamlit's own listener (which ran first) has asked for the entry's view, but the
  // session's newer sentence and settings would win. Mark the address and let Streamlit read it again: the
  // server then shows the view the entry holds (components.state.widgets.follow_history).
  let passing = false;
  window.addEventListener("popstate", () => {
    acted = false;
    if (!isOurs() && (onOurs || passing)) {  // Back from our entries (or on over older ones): pass over it
      onOurs = false;
      passing = true;
      return history.back();
    }
    passing = false;
    onOurs = isOurs();
    const url = new URL(location.href);
    if (url.searchParams.has("MARK")) return;
    url.searchParams.set("MARK", "1");
    replace(history.state, "", url);
    window.dispatchEvent(new PopStateEvent("popstate", {state: history.state}));
  });
  history.pushState = record;
  history.replaceState = record;
})();
</script>""".replace("MARK", FROM_HISTORY).replace("QUIET", NO_HISTORY_ENTRY)


def one_history_entry_per_action() -> None:
    """Install the script (invisible); call once per run, e.g. in the sidebar of app.py."""
    st.html(ONE_ENTRY_PER_ACTION, unsafe_allow_javascript=True)
