"""Each page's title in the navigation, declared once (no Streamlit import: scripts read it too)."""

APP_TITLE = "BERT Lens"
PAGE_TITLES = {  # file stem (a page's scope) -> its title in the navigation
    "home": APP_TITLE,
    "tokenizer": "Tokenizer",
    "anatomy": "Model anatomy",
    "fill_mask": "Fill-mask",
    "next_sentence": "Next sentence",
    "attention": "Attention",
    "senses": "Word senses",
}
