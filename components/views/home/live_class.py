"""The home page's live class: a student joins by the projector's code; a teacher starts one on a lesson."""

from __future__ import annotations

import streamlit as st

from bertlens.curriculum import LESSONS
from bertlens.models import ModelBundle
from components.state.classroom import ROOM, in_a_class
from components.ui.classroom import join_box
from components.ui.lessons import start_class_button


def live_class_section(bundle: ModelBundle) -> None:
    if in_a_class():
        return
    st.header("Live class", anchor=False)
    join, start = st.columns(2, gap="large")
    with join:
        st.caption("A student: type the code the projector shows.")
        if code := join_box():
            st.query_params[ROOM] = code
            st.rerun()  # the class's room takes the student to its step
    with start:
        st.caption("A teacher: the class joins, follows your steps and answers together.")
        chosen = st.selectbox("Lesson", list(LESSONS), format_func=lambda key: LESSONS[key].title, key="_class_lesson")
        start_class_button(bundle, key="_class_start_home", lesson=LESSONS[chosen])
