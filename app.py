"""BERT Lens — entry point: page config, navigation, the shared sidebar (model picker and status)."""

import streamlit as st

from components.layout import presentation_switch
from components.lessons import class_link
from components.model import active_bundle, model_picker, model_status, settings
from components.reconnect import reload_on_reconnect

st.set_page_config(page_title="BERT Lens", page_icon="🔎", layout="wide")
settings()  # malformed settings fail closed: an error here, and no page is served

PAGES = [
    st.Page("pages/home.py", title="BERT Lens", icon=":material/home:", default=True),
    st.Page("pages/tokenizer.py", title="Tokenizer", icon=":material/text_fields:"),
    st.Page("pages/anatomy.py", title="Model anatomy", icon=":material/account_tree:"),
    st.Page("pages/fill_mask.py", title="Fill-mask", icon=":material/edit_note:"),
    st.Page("pages/next_sentence.py", title="Next sentence", icon=":material/arrow_forward:"),
    st.Page("pages/attention.py", title="Attention", icon=":material/grid_on:"),
    st.Page("pages/senses.py", title="Word senses", icon=":material/scatter_plot:"),
]

page = st.navigation(PAGES)
with st.sidebar:
    model_picker()
    model_status(active_bundle())
    presentation_switch()
    reload_on_reconnect()  # a replica that dies or restarts costs no student their view
    class_link(page.url_path)  # the teacher's link: this page, lesson step, sentence, view and model
page.run()
