"""Each browser tab's share of the server: page runs at the pace the ``runs_per_minute`` budget allows."""

from __future__ import annotations

import time

import streamlit as st

from bertlens.budgets import Budgets
from bertlens.pacing import RunPace

PACE = "_bertlens_run_pace"  # session: this tab's RunPace


def pace_this_run(budgets: Budgets) -> None:
    """Wait before this run if the tab has asked for runs faster than its budget (saying so), else nothing."""
    pace = st.session_state.get(PACE)
    if not isinstance(pace, RunPace) or pace.per_minute != budgets.runs_per_minute:
        pace = st.session_state[PACE] = RunPace(budgets.runs_per_minute)
    if wait := pace.wait(time.monotonic()):
        st.toast(
            f"This tab asks for pages faster than the server shares out, so this one waits {max(wait, 0.1):.1f} s: "
            f"{budgets.limit('runs_per_minute')}.",
            icon=":material/hourglass_top:",
        )
        time.sleep(wait)
