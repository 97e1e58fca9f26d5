"""Word senses: one word in many sentences — where does its meaning emerge, layer by layer?"""

import streamlit as st

from bertlens.analysis import max_tokens
from components import senses_views as views
from components.layout import page_header
from components.model import active_model_name, settings
from components.state import shared_text

bundle = page_header(
    "Word senses",
    "One word in many sentences. Each occurrence is a point: its vector at the layer you choose. "
    "Do the senses pull apart — and at which layer?",
)
budgets = settings().budgets
request = views.sentence_input(budgets)
text = shared_text(
    "Your own sentence (optional)",
    help="The sentence that follows you from page to page. If it contains the word, it joins the map as a star.",
)
if request:
    model_name, max_length = active_model_name(), max_tokens(bundle, budgets.tokens)
    layer, method = views.view_controls(bundle.capabilities.num_layers)
    chosen = views.sentences_to_read(model_name, request, text, max_length, budgets)
if request and chosen:
    sentences, labels, listed = chosen
    words = views.word_vectors(model_name, request.word, sentences, request.references, max_length)
    if views.found_enough(words, listed=listed):
        point_labels = [labels[o.sentence_index] for o in words.occurrences]
        sense_labels = [s if s not in (views.NO_LABEL, views.YOUR_SENSE) else "" for s in point_labels]
        if method == "PCA 3D" and len(words.occurrences) < 3:
            st.info("A 3D map needs at least three occurrences; showing PCA 2D.")
            method = "PCA 2D"
        vectors = views.at_layer(words.contextual, layer)

        st.subheader("Map of the occurrences")
        projection = views.projection(model_name, request.word, sentences, max_length, layer, method, words)
        title = f"“{request.word}” — {views.layer_label(layer, words.num_layers)}, {method}"
        views.occurrence_map(words, point_labels, projection, title)

        st.subheader("Where do the senses separate?")
        views.separation_chart(words, sense_labels, layer)

        st.subheader("Similarity between occurrences")
        views.similarity_section(vectors, words, point_labels)

        st.subheader("Static vs contextual: would word2vec do this?")
        views.static_section(words, sense_labels, layer)

        st.subheader("The word in context vs reference words")
        views.reference_section(vectors, words, point_labels, request, layer)
