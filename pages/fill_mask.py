"""Fill-mask page (placeholder until its own issue fills it)."""

import streamlit as st

from components.layout import page_header, require_text, truncation_notice
from components.model import active_model_name, cached_analysis
from components.state import shared_text

page_header("Fill-mask", "BERT's guesses for each [MASK] in the sentence.")
text = shared_text()
if require_text(text):
    analysis = cached_analysis(active_model_name(), text)
    truncation_notice(analysis.encoding)
    st.write("Tokens:", list(analysis.encoding.tokens))
