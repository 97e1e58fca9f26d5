"""Model anatomy page: the configuration, where the parameters are, and the embeddings and pooler checked live."""

import streamlit as st

from components import anatomy_views as views
from components.layout import page_header, require_text, truncation_notice
from components.model import cached_analysis
from components.state import sentence_b, shared_text

bundle = page_header("Model anatomy", "The configuration, where the parameters are, and the embeddings and pooler checked live.")
model_name = bundle.name  # the model actually loaded keys every cached result

st.subheader("Parameters")
views.architecture_section(model_name)

st.subheader("The many embeddings")
text = shared_text()
text_b = sentence_b()
if require_text(text):
    truncation_notice(cached_analysis(model_name, text, text_b).encoding)
    views.embeddings_section(model_name, text, text_b)
    st.subheader("Pooler")
    views.pooler_section(model_name, text, text_b)
