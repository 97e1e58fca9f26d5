"""Tokenizer page: how text becomes the model's tokens (WordPiece, byte-level BPE, SentencePiece), ids, segments and
attention masks; the same text through a second tokenizer."""

from components.state.widgets import lazy_tabs, sentence_pair
from components.ui.layout import page_header, require_text
from components.views.tokenizer import sections as views

bundle, stage = page_header("Tokenizer", "How text becomes tokens, ids and masks.", page="tokenizer")
model_name = bundle.name  # the model actually loaded keys every cached result
with stage.side:
    text, text_b = sentence_pair()

with stage.picture:
    tokens_tab, vocab_tab, padding_tab = lazy_tabs(views.TABS, "tokenizer_tab")
if tokens_tab.open:
    with tokens_tab:
        if require_text(text):
            views.token_section(model_name, text, text_b)
            views.other_tokenizer_section(model_name, text, text_b)
if vocab_tab.open:
    with vocab_tab:
        views.vocabulary_section(model_name)
if padding_tab.open:
    with padding_tab:
        views.padding_section(model_name)
