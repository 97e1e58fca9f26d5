"""What a user sees in a real browser (Chromium), page by page, on a tiny random pre-training model.

Each test opens a deep link, checks values against a reference computed here with transformers
directly, checks that the user's text is shown literally (no HTML or Markdown made from it), types
a new input and sees the result change. The last test walks between pages through the sidebar.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
import torch
from playwright.sync_api import Page, expect
from transformers import AutoTokenizer, BertForPreTraining

from bertlens.pages import PAGE_TITLES
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from tests.browser.conftest import RUN_TIMEOUT_MS, wait_for_layout, wait_for_run
from tests.conftest import rounded

MARKUP = "Hello <b>bold</b> and *stars* [MASK] here."


@pytest.fixture(scope="module")
def reference(tiny_pretraining_dir):
    """The tiny model through plain transformers: the numbers the pages must show."""
    tokenizer = AutoTokenizer.from_pretrained(tiny_pretraining_dir)
    model = BertForPreTraining.from_pretrained(tiny_pretraining_dir, attn_implementation="eager").eval()
    return tokenizer, model


def top_guesses(reference, text: str, k: int) -> list[str]:
    tokenizer, model = reference
    inputs = tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**inputs).prediction_logits[0]
    position = inputs["input_ids"][0].tolist().index(tokenizer.mask_token_id)
    return tokenizer.convert_ids_to_tokens(logits[position].topk(k).indices.tolist())


def p_is_next(reference, a: str, b: str) -> float:
    tokenizer, model = reference
    with torch.inference_mode():
        logits = model(**tokenizer(a, b, return_tensors="pt")).seq_relationship_logits[0]
    return logits.softmax(-1)[0].item()


def token_count(reference, text: str) -> int:
    return len(reference[0](text)["input_ids"])


# --- what the page shows ----------------------------------------------------------------------


def main(page: Page):
    return page.locator('[data-testid="stMain"]')


def charts(page: Page):
    return main(page).locator(".js-plotly-plot")


def chart_text(page: Page, index: int = 0) -> str:
    """Everything a chart writes (titles, tick labels, legend): SVG text."""
    expect(charts(page).nth(index)).to_be_attached()
    return charts(page).nth(index).text_content() or ""


def metric(page: Page, label: str):
    """The value of the metric whose label is exactly ``label``."""
    exact = page.locator('[data-testid="stMetricLabel"]', has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))
    return main(page).locator('[data-testid="stMetric"]').filter(has=exact).locator('[data-testid="stMetricValue"]')


def slider_value(page: Page, key: str, **attributes: str):
    """The slider bound to URL parameter ``key`` (optionally: the one with these attributes)."""
    wanted = "".join(f'[{name}="{value}"]' for name, value in attributes.items())
    return page.locator(f".st-key-{key} input[type=range]{wanted}")


def assert_shown_literally(page: Page) -> None:
    """No element was made from the user's markup (the app's own scripts are marked ``data-bertlens``)."""
    assert main(page).locator("b, script:not([data-bertlens]), iframe, img[src=x]").count() == 0
    assert main(page).locator("em, i").filter(has_text="stars").count() == 0


def type_into(page: Page, key: str, text: str) -> None:
    """Type into a text area (Ctrl+Enter applies it) or a text input (Enter)."""
    box = page.locator(f".st-key-{key} textarea, .st-key-{key} input").first
    box.fill(text)
    box.press("Control+Enter" if box.evaluate("e => e.tagName") == "TEXTAREA" else "Enter")


def shared_box(page: Page):
    return page.locator(".st-key-text input")


# --- pages ------------------------------------------------------------------------------------


def test_home_links_every_page(open_url):
    page = open_url("")
    for title in ("Tokenizer", "Model anatomy", "Fill-mask", "Next sentence", "Attention", "Word senses"):
        expect(main(page).get_by_role("link", name=re.compile(title))).to_be_visible()


def test_tokenizer_counts_tokens_and_follows_typing(open_url, reference):
    page = open_url("tokenizer", text=MARKUP)
    expect(shared_box(page)).to_have_value(MARKUP)
    expect(metric(page, "Tokens (with special)")).to_have_text(str(token_count(reference, MARKUP)))
    tokens = main(page).get_by_role("region", name="tokens").get_by_role("table")  # a light, semantic table
    expect(tokens.get_by_role("columnheader", name="token", exact=True)).to_be_visible()
    expect(tokens.get_by_role("row")).to_have_count(token_count(reference, MARKUP) + 1)  # + the header row
    assert_shown_literally(page)

    new = "Tokenization splits unbelievable words."
    type_into(page, "text", new)
    expect(metric(page, "Tokens (with special)")).to_have_text(str(token_count(reference, new)))
    expect(page).to_have_url(re.compile(r"text=Tokenization"))


# The first and last characters of an element's text, left edges on screen.
ENDS = """e => { const text = e.firstChild, range = document.createRange();
  range.setStart(text, 0); range.setEnd(text, 1); const first = range.getBoundingClientRect().left;
  range.setStart(text, text.length - 1); range.setEnd(text, text.length); return [first, range.getBoundingClientRect().left]; }"""


def test_arabic_text_reads_right_to_left_in_its_box_and_as_plain_text(open_url):
    """An Arabic sentence in a left-to-right box put the [MASK] or full stop typed last where an Arabic reader
    starts (an audit of international input): a box or plain text whose first letter is Arabic reads right to left."""
    page = open_url("tokenizer", text="ذهب الطالب إلى المدرسة.")
    box = main(page).locator(".st-key-text").locator("textarea, input").first
    assert box.evaluate("e => getComputedStyle(e).unicodeBidi") == "plaintext"
    plain = main(page).locator('[data-testid="stText"]').filter(has_text="المدرسة").last  # the round trip, no [CLS]
    first, last = plain.evaluate(ENDS)
    assert last < first  # the full stop typed last is at the left: read right to left


def test_addresses_icons_and_bidi_controls_in_user_text_stay_plain(open_url):
    """Streamlit's Markdown links web and e-mail addresses and draws :material/…: icons even when escaped, and a
    right-to-left override in the word reversed the rest of the app's sentence around it."""
    typed = "www.example.com me@example.com http://example.com :material/home: abc\u202edef"
    page = open_url("tokenizer", tokenizer_tab="Vocabulary", word=typed)
    message = main(page).locator('[data-testid="stMarkdownContainer"]').filter(has_text="is not one word")
    expect(message).to_have_count(1)
    shown = message.inner_text()
    assert "www.example.com me@example.com http://example.com :material/home: abcdef" in shown.replace("\u2060", "")
    assert "\u202e" not in shown and message.locator("a").count() == 0  # no link made from the user's text
    assert main(page).get_by_role("img", name="home icon").count() == 0


def test_a_heatmap_of_number_tokens_keeps_its_token_labels(open_url):
    """Tokens such as "2 911" made plotly read the axis as numbers: an empty grid with ticks -1 to 6."""
    page = open_url("attention", text="Call 911 or 112 now.")
    expect(charts(page).first).to_contain_text("2 911")
    assert "3 or" in chart_text(page) and "-0.8" not in chart_text(page)


def test_anatomy_counts_parameters_and_follows_typing(open_url, reference):
    page = open_url("anatomy", text=MARKUP)
    total = sum(p.numel() for p in reference[1].parameters())  # tied decoder weight counted once
    expect(main(page)).to_contain_text(f"add up to {total:,}")  # the architecture opens first, its boxes summed
    expect(charts(page).first).to_be_attached()
    page.get_by_role("tab", name="Embeddings").click()  # a lazy tab: drawn when opened, kept in the link
    expect(page).to_have_url(re.compile(r"anatomy_tab=Embeddings"))
    expect(slider_value(page, "pos")).to_have_attribute("max", str(token_count(reference, MARKUP) - 1))
    assert_shown_literally(page)

    new = "A much shorter one."
    type_into(page, "text", new)  # the token-position slider now ends at the new last token
    expect(slider_value(page, "pos", max=str(token_count(reference, new) - 1))).to_be_attached()
    wait_for_run(page)
    expect(slider_value(page, "pos")).to_have_count(1)


def test_fill_mask_shows_the_models_top_guesses(open_url, reference):
    page = open_url("fill_mask", text=MARKUP, k="5")
    expect(shared_box(page)).to_have_value(MARKUP)
    expect(slider_value(page, "k")).to_have_value("5")
    shown = chart_text(page)
    for token in top_guesses(reference, MARKUP, 5):
        assert token in shown, (token, shown)
    assert_shown_literally(page)

    new = "The capital of France is [MASK]."
    expected = top_guesses(reference, new, 5)
    type_into(page, "text", new)
    expect(charts(page).first).to_contain_text(expected[0])
    wait_for_run(page)
    shown = chart_text(page)
    assert all(token in shown for token in expected), (expected, shown)


def test_several_masks_tables_show_their_numbers_without_scrolling(open_url):
    """Three masks across cut each guess table after its probability column at 1280 px: two across show the logit,
    the probability and the loss of each guess in view (the token id and the rest within the table's scroll)."""
    page = open_url("fill_mask", text="The [MASK] brown fox [MASK] over the [MASK] dog", k="5")
    regions = main(page).locator(".bl-table").filter(has=page.locator("th", has_text="loss if right"))
    expect(regions).to_have_count(3)
    for region in regions.all():
        right_edge = region.evaluate("r => r.getBoundingClientRect().right")
        for name in ("logit", "probability", "loss if right"):
            header = region.locator("th", has_text=name).first.evaluate("th => th.getBoundingClientRect().right")
            assert header <= right_edge + 0.5, (name, header, right_edge)


def test_next_sentence_probability_matches_the_head(open_url, reference):
    a, b = "<b>The weather</b> is *nice*.", "Let's go for a walk."
    page = open_url("next_sentence", a=a, b=b)
    expect(page.locator(".st-key-a input")).to_have_value(a)
    expect(metric(page, "P(IsNext)")).to_have_text(rounded(p_is_next(reference, a, b), 4))
    assert_shown_literally(page)

    new_a = "Deep learning is a branch of machine learning."
    type_into(page, "a", new_a)
    expect(metric(page, "P(IsNext)")).to_have_text(rounded(p_is_next(reference, new_a, b), 4))


def test_attention_deep_link_draws_the_chosen_head(open_url, reference):
    page = open_url("attention", text=MARKUP, layer="1", head="3")  # an old link: `layer` is `attn_layer` now
    expect(shared_box(page)).to_have_value(MARKUP)
    expect(slider_value(page, "attn_layer")).to_have_value("1")
    expect(page).to_have_url(re.compile(r"attn_layer=1"))
    expect(slider_value(page, "head")).to_have_value("3")
    heatmap = chart_text(page)
    assert "[CLS]" in heatmap and "bold" in heatmap and "stars" in heatmap
    assert_shown_literally(page)

    type_into(page, "text", "A giraffe looks around.")
    expect(charts(page).first).to_contain_text("##raf")
    expect(charts(page).first).not_to_contain_text("stars")


def test_senses_map_and_your_sentence(open_url):
    page = open_url("senses", preset="field", senses_tab="Separation by layer")
    expect(main(page)).to_contain_text(
        re.compile(r"Silhouette at hidden state \d+ \(after encoder layer \d+\): -?\d\.\d+")
    )
    page.get_by_role("tab", name="Map").click()
    expect(charts(page).filter(has_text="Football Pitch")).not_to_have_count(0)  # the map, by sense

    type_into(page, "text", "The <b>field</b> behind the *school* was muddy.")
    expect(charts(page).filter(has_text="your sentence")).not_to_have_count(0)
    assert_shown_literally(page)


def test_word_senses_layer_never_reaches_attention(open_url):
    """Word senses' hidden state 2 once arrived on Attention as a range slider (URL ``layer=(0, 2)``)
    drawing one row of attention on the diagonal. Each page now has its own parameter."""
    page = open_url("senses", preset="field", layer="1")  # an old link: Word senses reads it as senses_layer
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Attention").click()
    expect(page).to_have_url(re.compile(r"/attention\b"))
    wait_for_run(page)
    expect(slider_value(page, "attn_layer")).to_have_count(1)  # one thumb: a single encoder layer
    expect(slider_value(page, "attn_layer")).to_have_value("0")  # Attention's own default, nothing carried
    expect(page).not_to_have_url(re.compile(r"layer=%28|layer=\("))


def test_sidebar_navigation_keeps_the_shared_sentence(open_url):
    sentence = "Sinan loves <b>a</b> beautiful *day*."
    page = open_url("tokenizer", text=sentence)
    expect(shared_box(page)).to_have_value(sentence)
    for title, path in (("Attention", "attention"), ("Fill-mask", "fill_mask"), ("Model anatomy", "anatomy")):
        page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=title).click()
        expect(page).to_have_url(re.compile(rf"/{path}\b"))  # at the click, before the page's run
        expect(main(page).locator("h1")).to_have_text(title)  # its run has begun: the old page's box held it too
        expect(shared_box(page)).to_have_value(sentence)
        wait_for_run(page)
        assert_shown_literally(page)
    expect(page).to_have_url(re.compile(r"text=Sinan"))


def test_next_sentence_scores_the_pair_built_on_attention(open_url, reference):
    """Arriving with a sentence B from another page, A is that page's sentence (it was the example A)."""
    a, b = "Sinan loves <b>a</b> beautiful *day*.", "He goes for a walk."
    page = open_url("attention", text=a)
    type_into(page, "b", b)
    wait_for_run(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Next sentence").click()
    expect(page).to_have_url(re.compile(r"/next_sentence\b"))
    expect(page.locator(".st-key-a input")).to_have_value(a)
    expect(page.locator(".st-key-b input")).to_have_value(b)
    expect(metric(page, "P(IsNext)")).to_have_text(rounded(p_is_next(reference, a, b), 4))
    expect(page).to_have_url(re.compile(r"[?&]a=Sinan"))  # the link opens this pair
    assert_shown_literally(page)


def test_home_fetches_plotly_while_the_student_reads_it(open_url):
    """The first chart page of a tab then draws at once (components.views.home.cards.preload_charts)."""
    page = open_url("")
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').some(e => e.name.includes('/app/static/plotly/plotly.js'))",
        timeout=RUN_TIMEOUT_MS,
    )
    expect(page.locator(".js-plotly-plot")).to_have_count(0)  # nothing drawn: only fetched and compiled
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Attention").click()
    wait_for_run(page)
    expect(charts(page).first).to_be_visible()
    fetched = page.evaluate("() => performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)")
    assert fetched.count("/app/static/plotly/plotly.js") == 1  # the charts import the module home fetched


def test_a_pages_own_text_is_still_there_after_another_page(open_url):
    """The browser drops the link on a page switch: the Padding lab's lines come back from session state."""
    page = open_url("tokenizer", tokenizer_tab="Padding lab")
    type_into(page, "lines", "my own line\nand another")
    expect(page).to_have_url(re.compile(r"lines=my\+own\+line"))  # its run began: wait_for_run could pass before
    wait_for_run(page)
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_role("link", name="Attention").click()
    expect(page).to_have_url(re.compile(r"/attention\b"))
    wait_for_run(page)
    nav.get_by_role("link", name="Tokenizer").click()
    wait_for_run(page)
    main(page).get_by_role("tab", name="Padding lab").click()
    wait_for_run(page)
    expect(page.locator(".st-key-lines textarea")).to_have_value("my own line\nand another")
    expect(page).to_have_url(re.compile(r"lines=my\+own\+line"))


@pytest.mark.parametrize(
    ("page_name", "key", "params"),
    [("tokenizer", "text", {}), ("tokenizer", "lines", {"tokenizer_tab": "Padding lab"}), ("fill_mask", "text", {})],
)
def test_a_very_long_text_keeps_the_page_reloadable(open_url, page_name, key, params):
    """15,000 CJK characters are 135,000 in a link, which the server refuses: the link leaves the text out,
    the shared sentence's and a page's own text box's alike. Fill-mask ends early without a [MASK], and
    still fits its link and keeps the sidebar's class link (``st.stop()`` once ended the whole run)."""
    page = open_url(page_name, **params)
    type_into(page, key, "中文句子。" * 3000)
    wait_for_run(page)
    expect(main(page)).to_contain_text("Too long for a link")  # said while the run goes on; the link is fit at its end
    expect(page).not_to_have_url(re.compile(rf"[?&]{key}="))
    assert len(page.url) < 8_000
    page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Show the class link").click()
    expect(
        page.get_by_role("dialog").get_by_text("Too long to share whole")
    ).to_be_visible()  # it names what it leaves out
    page.keyboard.press("Escape")
    page.reload()
    wait_for_run(page)
    expect(main(page).locator("h1").first).to_have_text(PAGE_TITLES[page_name])  # not a blank "Invalid HTTP request"


TRUNCATED = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter(e => e.textContent.trim() && getComputedStyle(e).textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1)
  .map(e => e.textContent)"""


@pytest.mark.parametrize("path", ["tokenizer", "attention"])
def test_presentation_mode_cuts_no_label_and_numbers_stay_larger(page, open_url, path):
    """Projector text is larger: labels once ended in "…" ("Words cut into ## pi…") and metric numbers came
    out smaller than their labels."""
    page.set_viewport_size({"width": 1280, "height": 720})  # a projector's
    open_url(path, present="true")
    expect(main(page).locator("h1")).to_be_visible()
    wait_for_layout(page)  # the widgets in place of their skeletons, the fonts in: the layout the style gives
    assert page.evaluate(TRUNCATED) == []
    if path == "tokenizer":
        size = "e => parseFloat(getComputedStyle(e).fontSize)"
        value = main(page).locator('[data-testid="stMetricValue"] p').first.evaluate(size)
        label = main(page).locator('[data-testid="stMetricLabel"] p').first.evaluate(size)
        assert value > 1.5 * label
        cell = main(page).locator(".bl-table td").first.evaluate(size)  # the tokens table: 14 px when reading
        assert cell >= 19, cell
    else:  # the lessons audit: the slider's value was drawn through its thumb, and the last tabs scrolled away
        value = main(page).locator('[data-testid="stSliderThumbValue"]').first.bounding_box()
        thumb = main(page).get_by_role("slider").first.bounding_box()
        assert value and thumb and value["y"] + value["height"] <= thumb["y"] + 1, (value, thumb)
        tabs = main(page).get_by_role("tablist").first
        assert tabs.evaluate("list => list.scrollWidth <= list.clientWidth"), "some tabs are out of sight"


def test_presentation_mode_shows_a_top_10_and_what_the_model_reads_without_scrolling(page, open_url):
    """QA: on a projector row 10 of the guesses hid under the table box's fold (a fixed 416 px for 19 px text), and
    the tokens table's token_type_ids and attention_mask columns were off the page at its end."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_url("fill_mask", text="Paris is the most [MASK] city in the world.", present="true")
    wait_for_layout(page)
    guesses = main(page).locator(".bl-table").first
    assert guesses.locator("tbody tr").count() == 10
    assert guesses.evaluate("box => box.scrollHeight <= box.clientHeight + 1")
    open_url("tokenizer", text="Bank is located in the city of London", present="true")
    wait_for_layout(page)
    tokens = main(page).locator(".bl-table").first
    inside = tokens.evaluate("box => box.getBoundingClientRect().right")
    for column in ("token_type_ids", "attention_mask"):
        header = tokens.locator("th", has_text=column).bounding_box()
        assert header and header["x"] + header["width"] <= inside, column


def test_the_back_button_walks_the_views_and_then_leaves(page, open_url):
    """Back undoes one action at a time. Streamlit pushed a history entry for every change a run made to the
    address: a page that wrote its settings on opening was two presses deep before the student had done
    anything, leaving a page added one more, and Back to a sentence showed the session's newer one."""
    open_url("attention", text="A first sentence.")
    view = page.locator(".st-key-view")
    view.get_by_role("radio", name="Rollout").click()
    expect(page).to_have_url(re.compile(r"view=Rollout"))  # its run began: wait_for_run could pass before
    wait_for_run(page)
    box = main(page).get_by_role("textbox", name="Sentence", exact=True)
    box.fill("A second sentence.")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"text=A(\+|%20)second"))
    wait_for_run(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Tokenizer").click()
    expect(page).to_have_url(re.compile(r"/tokenizer\b"))
    wait_for_run(page)
    page.go_back()  # the view the student left
    wait_for_run(page)
    expect(page).to_have_url(re.compile(r"/attention\b"))
    expect(view.get_by_role("radio", name="Rollout")).to_be_checked()
    expect(box).to_have_value("A second sentence.")
    page.go_back()  # before the new sentence
    wait_for_run(page)
    expect(box).to_have_value("A first sentence.")
    expect(view.get_by_role("radio", name="Rollout")).to_be_checked()
    page.go_back()  # before Rollout
    wait_for_run(page)
    expect(view.get_by_role("radio", name="Raw attention")).to_be_checked()
    page.go_back()  # and out: opening the page added no step of its own
    expect(page).not_to_have_url(re.compile(r"/attention\b"))


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("fill_mask", {"lesson": "discover", "step": "2"}),
        ("attention", {"text": "Hi", "layer": "99", "attn_tab": "No"}),
    ],
)
def test_one_back_leaves_a_link_that_the_page_rewrites(page, server_url, path, params):
    """A link's first run rewrites its address (a bare lesson link opens its step's view, bad values are dropped)
    before app.py's history script is in, and Streamlit kept each rewrite as an entry of its own: Back reopened
    the same view, and a student needed two presses (five for the bad values) to leave."""
    link = f"{server_url}/{path}?{urlencode(params)}"
    page.goto(link)
    wait_for_run(page)
    expect(page).not_to_have_url(link)  # rewritten
    page.go_back()
    expect(page).to_have_url("about:blank")  # where the tab was before the link


def test_a_very_long_cell_wraps_and_the_numbers_stay_in_view(open_url):
    """A 3,000-character candidate B once filled the ranking table's width and pushed P(IsNext) off screen."""
    page = open_url("next_sentence", nsp_tab="Ranking", candidates="x" * 3000 + "\nIt rained.")
    header = main(page).locator(".bl-table th", has_text="p_is_next")
    expect(header).to_be_visible()
    box = header.bounding_box()
    assert box is not None and box["x"] + box["width"] <= page.viewport_size["width"]


CELL_LINES = """() => [...document.querySelectorAll('[data-testid="stMain"] .bl-table td')].map(td => {
    const range = document.createRange(); range.selectNodeContents(td);
    return [td.textContent, new Set([...range.getClientRects()].map(r => Math.round(r.top))).size];
})"""


@pytest.mark.parametrize(
    "path, params",
    [
        ("tokenizer", {"text": "Sinan is our instructor for this awesomesauce class"}),
        ("anatomy", {"anatomy_tab": "Parameters"}),
    ],
)
def test_table_cells_keep_numbers_and_words_whole(open_url, path, params):
    """A seed audit read id 8254 as "82/54" and "instructor" as "instruc/tor" (on the page that teaches WordPiece
    splits), "Embeddings" as "Embe/dding/s": cells could break anywhere, so the table squeezed its columns."""
    page = open_url(path, **params)
    expect(main(page).locator(".bl-table td").first).to_be_visible()
    broken = [text for text, lines in page.evaluate(CELL_LINES) if lines > 1 and " " not in text.strip()]
    assert broken == []


def test_a_page_that_ends_early_keeps_its_view_in_the_link(open_url):
    """Fill-mask without a [MASK] ends before its tabs: the open tab stays in the link. (A run that Streamlit sees
    end normally drops the link value of every bound widget it did not draw; AppTest does not show it.)"""
    page = open_url("fill_mask", fill_tab="Layer by layer", text="The [MASK] sat.")
    type_into(page, "text", "No mask here.")
    wait_for_run(page)
    expect(main(page)).to_contain_text("[MASK]")
    expect(page).to_have_url(re.compile(r"fill_tab=Layer\+by\+layer"))


def test_a_custom_model_travels_in_the_link(open_url, tmp_path):
    """The teacher loads a folder as a custom model: the address carries it (it carried only the menu's label), and
    the same link in a fresh tab opens the same model."""
    folder = str(save_random_bert(tmp_path / "custom", random_bert_config(**{**TINY_CONFIG, "num_hidden_layers": 3})))
    page = open_url("tokenizer")
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator(".st-key-model [role=combobox]").click()
    page.get_by_role("option", name="Custom Hub id or folder…").click()
    wait_for_run(page)
    box = sidebar.get_by_label("Hub id or local folder")
    box.fill(folder)
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"custom_model=%2F"))
    wait_for_run(page)
    expect(sidebar).to_contain_text("3 encoder layers")
    link = page.url
    page.goto("about:blank")
    page.goto(link)  # a fresh session, as a student's
    wait_for_run(page)
    expect(sidebar).to_contain_text(folder)
    expect(sidebar).to_contain_text("3 encoder layers")
