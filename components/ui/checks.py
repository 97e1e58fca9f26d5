"""A number checked against its reference on the page: the largest difference, and whether it is float32 rounding."""

from __future__ import annotations

import streamlit as st

CHECK_TOLERANCE = 1e-4  # float32 arithmetic in a different order differs by ~1e-7


def check_result(label: str, difference: float) -> None:
    st.metric(f"max |difference|: {label}", f"{difference:.2e}")
    if difference < CHECK_TOLERANCE:
        st.success(f"Equal up to float32 rounding (max |difference| = {difference:.2e}).")
    else:
        st.error(f"They differ (max |difference| = {difference:.2e}).")
