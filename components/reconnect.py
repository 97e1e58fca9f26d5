"""After the browser loses its server connection and gets it back, reload the page (the view is in its URL).

Behind a balancer with several replicas (scripts/serve.py, deploy/), a replica that dies or restarts takes
its sessions with it: Streamlit's frontend reconnects to another replica but, when it was idle, sends no
rerun (it expects the old server to resume the session), so the tab would keep a stale page that no
server holds (its downloads and media gone). A reload opens the same URL on a live replica: same page,
sentence, settings and numbers. On a single server the same holds after a restart; a mere network blip
costs one extra run.
"""

from __future__ import annotations

import streamlit as st

# Watches Streamlit's connection state (the app root's data-test-connection-state attribute, which the
# browser tests also read); installed once per page load, whatever the number of reruns.
RELOAD_ON_RECONNECT = """<script>
(() => {
  if (window.bertlensReloadOnReconnect) return;
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return;
  window.bertlensReloadOnReconnect = true;
  let lost = false;
  new MutationObserver(() => {
    const connected = app.getAttribute("data-test-connection-state") === "CONNECTED";
    if (!connected) lost = true;
    else if (lost) window.location.reload();
  }).observe(app, {attributes: true, attributeFilter: ["data-test-connection-state"]});
})();
</script>"""


def reload_on_reconnect() -> None:
    """Draw the (invisible) watcher; call once per run, e.g. in the sidebar of app.py."""
    st.html(RELOAD_ON_RECONNECT, unsafe_allow_javascript=True)
