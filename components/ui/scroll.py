"""The page stays where the student is when a run opens another tab.

Streamlit 1.67 scrolls a tab strip's open tab into view whenever the open tab changes (``scrollIntoView`` with
``block: "nearest"``), meant for a strip too wide for its column, which it scrolls sideways. It scrolls the page
too: a lesson's Next or Back that opens another tab of a strip below the screen (Attention's All heads → Head view,
at 1280×720) moved the page up by 450–650 px, the new step's title and its Back and Next out of sight above it.
This script keeps the sideways part, inside the strip, and leaves the page where it is. A tab the student clicks or
reaches with the arrow keys is on the screen already (focus brings it there). Our own constant script, installed
once per page load.
"""

from __future__ import annotations

import streamlit as st

TABS_SCROLL_SIDEWAYS = """<script data-bertlens="tabs-scroll-sideways">
(() => {
  if (window.bertlensTabsScroll) return;
  window.bertlensTabsScroll = true;
  const original = Element.prototype.scrollIntoView;
  Element.prototype.scrollIntoView = function (options) {
    const strip = this.getAttribute?.("role") === "tab" && this.closest('[data-testid="stTabs"] [role="tablist"]');
    if (!strip) return original.apply(this, arguments);
    const tab = this.getBoundingClientRect(), seen = strip.getBoundingClientRect();
    const left = tab.left < seen.left ? tab.left - seen.left
      : tab.right > seen.right ? Math.min(tab.right - seen.right, tab.left - seen.left) : 0;
    const behavior = (options && typeof options === "object" && options.behavior) || "auto";
    if (left) strip.scrollBy({left, behavior});  // sideways in its strip; the page does not move
  };
})();
</script>"""


def keep_page_in_place() -> None:
    """Install the script (invisible); call once per run, e.g. in the sidebar of app.py."""
    st.html(TABS_SCROLL_SIDEWAYS, unsafe_allow_javascript=True)
