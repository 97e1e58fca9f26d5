"""The page registry: every page declared once (no Streamlit import: the app, the lessons, the scripts and the tests
read it). Adding a page is a ``PageSpec`` here, ``pages/<stem>.py`` and its ``components/views/<stem>/`` package."""

from __future__ import annotations

from dataclasses import dataclass

APP_TITLE = "BERT Lens"


@dataclass(frozen=True)
class PageSpec:
    stem: str  # pages/<stem>.py; the page's scope in the link schema and its views' package
    title: str  # in the navigation and as the page's heading
    icon: str  # Streamlit's Material icon in the navigation
    blurb: str = ""  # what it shows, one line on the home page's card (none: no card)
    chart: bool = False  # its first view draws a chart

    @property
    def file(self) -> str:
        return f"pages/{self.stem}.py"

    @property
    def url_path(self) -> str:
        """Its path in a link ("" for the home page, Streamlit's default page)."""
        return "" if self.stem == HOME else self.stem


HOME = "home"
PAGES = (
    PageSpec(HOME, APP_TITLE, ":material/home:"),
    PageSpec(
        "tokenizer",
        "Tokenizer",
        ":material/text_fields:",
        "how text becomes WordPiece tokens, ids, segments and attention masks; the vocabulary; padding.",
    ),
    PageSpec(
        "anatomy",
        "Model anatomy",
        ":material/account_tree:",
        "the architecture with this model's sizes, where the parameters are, the embeddings checked live.",
        chart=True,
    ),
    PageSpec(
        "fill_mask",
        "Fill-mask",
        ":material/edit_note:",
        "BERT's guesses for each `[MASK]`, with probabilities and the loss of the true word.",
        chart=True,
    ),
    PageSpec(
        "next_sentence",
        "Next sentence",
        ":material/arrow_forward:",
        "does B follow A? Probabilities, ranking of candidates, and an evaluation table.",
    ),
    PageSpec(
        "attention",
        "Attention",
        ":material/grid_on:",
        "every layer and head as heatmaps and lines, head statistics, rollout.",
        chart=True,
    ),
    PageSpec(
        "senses",
        "Word senses",
        ":material/scatter_plot:",
        "one word in many sentences: where does its meaning separate, layer by layer?",
        chart=True,
    ),
)
PAGE = {page.stem: page for page in PAGES}
PAGE_TITLES = {page.stem: page.title for page in PAGES}  # stem -> title
TOOL_PAGES = tuple(page.stem for page in PAGES if page.stem != HOME)  # the pages that show the model
