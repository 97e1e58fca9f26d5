"""After the browser loses its server connection and gets it back, reload the page (the view is in its URL).

Behind a balancer with several replicas (scripts/serve.py, deploy/), a replica that dies or restarts takes
its sessions with it: Streamlit's frontend reconnects to another replica but, when it was idle, sends no
rerun (it expects the old server to resume the session), so the tab would keep a stale page that no
server holds (its downloads and media gone). A reload opens the same URL on a live replica: same page,
sentence, settings and numbers. On a single server the same holds after a restart; after a mere network blip
the reload costs one extra run and what lived only in the session (an uploaded CSV, edited evaluation pairs),
since it opens a new session; lesson answers are kept in the browser (``components.state.answers``).

The student whose replica died had already waited in its queue, and usually was waiting when it died (a
class keeps every replica busy). So the reload carries a short-lived cookie, and the reopened view's forward
passes queue ahead of the live replica's visitors (``bertlens.engine.REOPENED``) instead of behind all of
them, until one run of the reopened tab has ended (a run cut short by the student's next click keeps the
place for the run that replaces it).

Limits, all about order, never about results: work that another session is already computing inside an
``st.cache_data`` function is waited for at that session's place; the cookie is shared by the browser's
tabs, so a tab opened in the same moment may get the priority and a sibling tab may lose it; a student who
sets it by hand gets each new tab's first view sooner, and the engine's patience bounds what that costs
everyone else (no visitor waits more than 30 s behind reopened views).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import streamlit as st
from streamlit.runtime.scriptrunner import RerunException

from bertlens.engine import reopened_priority

REOPENED_COOKIE = "bertlens_reopened"  # set by the watcher just before it reloads; cleared once the page is back
FIRST_RUN_DONE = "_bertlens_first_run_done"  # session flag: a run of this session has ended (not cut short)

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
    """True until the first run of a session opened by the watcher's reload (``REOPENED_COOKIE``) has ended."""
    return cookies.get(REOPENED_COOKIE) == "1" and not first_run_done


@contextlib.contextmanager
def reopened_view_first() -> Iterator[None]:
    """Run the page; when it reopens a view lost with its replica, its passes queue ahead of visitors'."""
    reopened = reopens_lost_view(st.context.cookies, bool(st.session_state.get(FIRST_RUN_DONE)))
    cut_short = False
    try:
        with reopened_priority() if reopened else contextlib.nullcontext():
            yield
    except RerunException:  # the student changed the view before it was drawn: the next run keeps the place
        cut_short = True
        raise
    finally:  # drawn, stopped by the page (PageStopped) or failed: the reopened view has had its turn
        if not cut_short:
            st.session_state[FIRST_RUN_DONE] = True
