"""Landing page: what BERT is and what each page shows."""

import streamlit as st

from components.layout import nav_link, page_header
from components.lessons import lesson_list

bundle = page_header("BERT Lens", "See inside BERT: tokens, weights, predictions, attention and meaning.", page="home")

st.markdown(
    """
**BERT** (Devlin et al., 2019) is a stack of Transformer encoder layers pre-trained on two tasks:
guessing hidden words (*masked language modelling*) and telling whether sentence B follows
sentence A (*next sentence prediction*). Every token attends to every other token in both
directions, so each word's vector is shaped by its whole context. BERT Lens lets you look at
each step. The sentence you type follows you from page to page and lives in the link, so a
copied URL shows the same view.
"""
)

st.header("Lessons")
st.caption("Guided steps over the live pages, following the course notebooks. Each step asks you to predict first.")
lesson_list(bundle)

st.header("Pages")
PAGES = [
    (
        "pages/tokenizer.py",
        "Tokenizer",
        "how text becomes WordPiece tokens, ids, segments and attention masks; the vocabulary; padding.",
    ),
    (
        "pages/anatomy.py",
        "Model anatomy",
        "the configuration, where the parameters are, and the embeddings and pooler checked live.",
    ),
    (
        "pages/fill_mask.py",
        "Fill-mask",
        "BERT's guesses for each `[MASK]`, with probabilities and the loss of the true word.",
    ),
    (
        "pages/next_sentence.py",
        "Next sentence",
        "does B follow A? Probabilities, ranking of candidates, and an evaluation table.",
    ),
    ("pages/attention.py", "Attention", "every layer and head as heatmaps and lines, head statistics, rollout."),
    ("pages/senses.py", "Word senses", "one word in many sentences: where does its meaning separate, layer by layer?"),
]
for path, title, what in PAGES:
    nav_link(path, f"**{title}** — {what}")
