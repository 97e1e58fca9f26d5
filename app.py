"""BERT Lens — entry point: page config, navigation, the shared sidebar (model picker and status)."""

from pathlib import Path

from bertlens.serving import import_package, imported, prepare_threads, send_small_messages_at_once

prepare_threads()  # before anything loads torch: OpenMP reads its settings once, at load
send_small_messages_at_once()  # no ~40 ms wait at the end of each run (Nagle's algorithm); once per process

import streamlit as st

from bertlens.pages import APP_TITLE, HOME, PAGES

PRESENTING = (
    st.query_params.get("present", "").lower() == "true"
)  # the sidebar folded away: the projector is for the page
st.set_page_config(
    page_title=APP_TITLE, page_icon="🔎", layout="wide", initial_sidebar_state="collapsed" if PRESENTING else "auto"
)
NAVIGATION = [st.Page(page.file, title=page.title, icon=page.icon, default=page.stem == HOME) for page in PAGES]
# The menu goes out before the app's first import (torch and transformers: ~5 s on a fresh server), which
# showed Streamlit's raw list of the pages/ files meanwhile.
page = st.navigation(NAVIGATION)
if not imported("components"):  # a fresh server: one run imports the app, the others wait for it
    with st.spinner("Starting BERT Lens: loading PyTorch and transformers (once, after the server starts)…"):
        import_package(Path(__file__).parent / "components", "components")

from streamlit.runtime.scriptrunner import RerunException

from components.services import protocol
from components.services.pace import pace_this_run
from components.services.page_flow import PageStopped
from components.services.settings import settings
from components.state.history import one_history_entry_per_action
from components.state.model_choice import active_bundle
from components.state.params import (
    BROKEN,
    LINKED,
    SCOPE,
    carry_warnings,
    copy_page_state,
    fit_link,
    show_carried_warnings,
    take_carried_warnings,
    too_long_for_the_link,
)
from components.state.widgets import shared_texts_in_link
from components.ui.class_link import class_link_button, show_class_link
from components.ui.focus import keep_focus
from components.ui.layout import presentation_switch
from components.ui.lessons import start_class_button
from components.ui.model_picker import model_picker, model_status
from components.ui.reconnect import reload_on_reconnect, reopened_view_first
from components.ui.scroll import keep_page_in_place

protocol.install()  # a visitor's clear_cache or forged widget state harms nobody (before any page draws)
config = settings()  # malformed settings fail closed: an error here, and no page is served
protocol.host(config.hosted)
ignored = protocol.ignored_link()  # a link over Streamlit's limits is read as no link: say so
pace_this_run(config.budgets)  # a tab asking for runs faster than its budget waits (a person clicking never does)
carried = take_carried_warnings()  # a replaced run's warnings about the link (its value may be gone by now)
with st.sidebar:
    class_link_button()  # first: on a 720-pixel projector's first screen, on every page
    start_class_button(active_bundle(), key="_class_start")
    model_picker()
    model_status(active_bundle())
    presentation_switch()
    reload_on_reconnect()  # a replica that dies or restarts costs no student their view
    one_history_entry_per_action()  # Back undoes the student's last action, not one of its address changes
    keep_focus()  # a key press that reruns the page does not leave focus on <body>
    keep_page_in_place()  # a run that opens another tab does not scroll the page to its strip
link_notice = st.empty()  # above the page: what its link leaves out
if ignored:
    st.warning(ignored, icon=":material/link_off:")
show_carried_warnings(carried)
crashed = stopped = False
try:
    with reopened_view_first(), shared_texts_in_link():  # a lost view goes first; the link keeps every text
        page.run()
except RerunException:  # another run replaces this one: it shows this run's warnings about the link
    carry_warnings()
    raise
except PageStopped:
    stopped = True  # the page ended early, having said why: what follows every page still runs
except Exception as error:
    crashed = True  # a setting that broke the page is not brought back by a return to it
    st.session_state[BROKEN] = st.session_state.get(SCOPE)
    st.session_state.pop(LINKED + str(st.session_state.get(SCOPE)), None)  # nor by the link's kept values
    if not config.hosted:
        raise
    protocol.report_failure(error)  # a visitor sees a message, the server's log the traceback
finally:  # after the page has written its view to the URL (also when it stops early)
    if not crashed:
        copy_page_state()  # what a return to the page puts back (restore_page_state)
    if dropped := fit_link():  # a link servers refuse would lose the view on reload
        link_notice.info(too_long_for_the_link(dropped), icon=":material/link_off:")
    show_class_link(page.url_path, left_out=tuple(dropped))  # if asked for: the teacher's link, as the page wrote it
if stopped:  # and then an early stop for Streamlit, as st.stop() is: it keeps the widgets the page did not draw,
    raise PageStopped  # and their values in the URL (a run that ends normally drops them)
