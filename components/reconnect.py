"""After the browser loses its server connection and gets it back, reload the page (the view is in its URL).

Behind a balancer with several replicas (scripts/serve.py, deploy/), a replica that dies or restarts takes
its sessions with it: Streamlit's frontend reconnects to another replica but, when it was idle, sends no
rerun (it expects the old server to resume the session), so the tab would keep a stale page that no
server holds (its downloads and media gone). A reload opens the same URL on a live replica: same page,
sentence, settings and numbers. On a single server the same holds after a restart; a mere network blip
costs one extra run.

The student whose replica died had already waited in its queue, and usually was waiting when it died (a
class keeps every replica busy). So the reload carries a short-lived cookie, and the reopened view's first
run queues its forward passes ahead of the live replica's visitors (``bertlens.engine.REOPENED``) instead of
behind all of them. The cookie only reorders the queue, once per new tab: a student who forges it gets one
tab's first view computed sooner, never a different result.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import streamlit as st

from bertlens.engine import reopened_priority

REOPENED_COOKIE = "bertlens_reopened"  # set by the watcher just before it reloads; cleared once the page is back
FIRST_RUN_DONE = "_bertlens_first_run_done"  # session flag: the session's first run has finished

# Watches Streamlit's connection state (the app root's data-test-connection-state attribute, which the
# browser tests also read); installed once per page load, whatever the number of reruns.
RELOAD_ON_RECONNECT = """<script>
(() => {
  if (window.bertlensReloadOnReconnect) return;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return;
  window.bertlensReloadOnReconnect = true;
  // This page's websocket has already been opened (this script comes with its first run): the cookie did its work.
  document.cookie = "COOKIE=; max-age=0; path=/; SameSite=Lax";
  let lost = false;
  new MutationObserver(() => {
    const connected = app.getAttribute("data-test-connection-state") === "CONNECTED";
    if (!connected) lost = true;
    else if (lost) {
      document.cookie = "COOKIE=1; max-age=60; path=/; SameSite=Lax";
      window.location.reload();
    }
  }).observe(app, {attributes: true, attributeFilter: ["data-test-connection-state"]});
})();
</script>""".replace("COOKIE", REOPENED_COOKIE)


def reload_on_reconnect() -> None:
    """Draw the (invisible) watcher; call once per run, e.g. in the sidebar of app.py."""
    st.html(RELOAD_ON_RECONNECT, unsafe_allow_javascript=True)


def reopens_lost_view(cookies: Mapping[str, str], first_run_done: bool) -> bool:
    """True for the first run of a session opened by the watcher's reload (``REOPENED_COOKIE``)."""
    return cookies.get(REOPENED_COOKIE) == "1" and not first_run_done


@contextlib.contextmanager
def reopened_view_first() -> Iterator[None]:
    """Run the page; when it reopens a view lost with its replica, its passes queue ahead of visitors'."""
    reopened = reopens_lost_view(st.context.cookies, bool(st.session_state.get(FIRST_RUN_DONE)))
    try:
        with reopened_priority() if reopened else contextlib.nullcontext():
            yield
    finally:  # however the run ended: only the first one goes ahead
        st.session_state[FIRST_RUN_DONE] = True
