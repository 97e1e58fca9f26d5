"""Word senses: one word in many sentences — where does its meaning emerge, layer by layer?"""

import streamlit as st

from bertlens.senses import at_layer, layer_label
from components.services import cache
from components.services.settings import settings
from components.state.widgets import lazy_tabs, note_b_not_read, shared_text
from components.ui.layout import page_header
from components.views.senses import class_map
from components.views.senses import sections as views

bundle, stage = page_header("Word senses", "One word in many sentences: where do its senses pull apart?", page="senses")
budgets = settings().budgets
class_round = class_map.sentence_round(stage)  # a live class's Word senses round: the class's sentences mapped
with stage.side:
    request, text = views.sentence_input(
        budgets,
        lambda: shared_text(
            "Your own sentence (optional)",
            default="",  # the other pages' example has none of the words here: it drew no star, and nothing said why
            placeholder="A sentence of yours with the word: it joins the map as a star",
            help="The sentence that follows you from page to page. If it contains the word, it joins the map as a "
            "star, placed on the map of the listed sentences (PCA keeps their axes when they have more points than "
            "it has axes; MDS spreads every point anew).",
        ),
    )
    note_b_not_read("word senses reads your own sentence and the sentences listed")
    if request:
        query = cache.query(bundle.name)  # the model loaded and the token cap key every cached result
        layer, method = views.view_controls(bundle.capabilities.num_layers)
    if class_round:
        class_map.sentence_box(class_round, cache.query(bundle.name))
with stage.picture:
    if request and class_round:
        class_map.class_map(class_round, query, layer, method, budgets)
    chosen = views.sentences_to_read(query, request, text, budgets) if request else None
    if request and chosen:
        sentences, labels, listed = chosen
        words = cache.word_vectors(query, request.word, sentences, request.references)
        if views.found_enough(words, listed=listed):
            point_labels = [labels[o.sentence_index] for o in words.occurrences]
            sense_labels = views.sense_labels_of(point_labels)
            if method == "PCA 3D" and len(words.occurrences) < 3:
                st.info("A 3D map needs at least three occurrences; showing PCA 2D.")
                method = "PCA 2D"
            vectors = at_layer(words.contextual, layer)

            map_tab, separation_tab, similarity_tab, static_tab, reference_tab = lazy_tabs(views.TABS, "senses_tab")
            if map_tab.open:
                with map_tab:
                    projection = cache.projection(
                        query, request.word, sentences, request.references, layer, method, listed
                    )
                    title = f"“{request.word}” — {layer_label(layer, words.num_layers)}, {method}"
                    views.occurrence_map(words, point_labels, projection, title, layer)
            if separation_tab.open:
                with separation_tab:
                    scores = cache.separations(query, request.word, sentences, request.references, tuple(sense_labels))
                    views.separation_chart(words, sense_labels, layer, scores)
            if similarity_tab.open:
                with similarity_tab:
                    views.similarity_section(vectors, words, point_labels)
            if static_tab.open:
                with static_tab:
                    views.static_section(words, point_labels, layer)
            if reference_tab.open:
                with reference_tab:
                    views.reference_section(query, vectors, words, point_labels, request, layer)
