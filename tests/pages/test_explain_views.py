"""The views that explain how BERT gets there, opened from links (AppTest): what is drawn equals a
reference computed here, independently, and a link reproduces the view."""

import json

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from bertlens.compare import SEED_FIRST, SEED_SECOND
from bertlens.curriculum import ANIMAL_TIRED, ANIMAL_WIDE
from bertlens.influence import TOKEN_BUDGET
from bertlens.models import BUNDLED_MODEL
from components.services.text import literal
from components.views.attention.sections import TABS
from components.views.attention.steps import SCOPES, STEP_PARTS
from components.views.fill_mask.sections import rank_ticks
from tests.conftest import assert_shows, chart_title, drawn_charts, tables
from tests.core.test_influence import reference_guesses
from tests.core.test_steps import reference_head
from tests.pages.test_attention_page import typed

ATTENTION, FILL_MASK = "pages/attention.py", "pages/fill_mask.py"
MASKED = "The capital of France is [MASK]."
EVERY_TOKEN = SCOPES[1]


def charts(at) -> dict[str, dict]:
    """Every chart on the page by its key."""
    return {c.id.rsplit("-", 1)[-1]: json.loads(c.spec) for c in drawn_charts(at)}


def frame(at, column: str):
    return next(d for d in tables(at) if column in d.columns)


def text_of(at) -> str:
    return " ".join(
        str(e.value) for kind in ("markdown", "caption", "info", "warning", "success") for e in getattr(at, kind)
    )


def reopen(open_page, at, path, model, **chosen):
    """A fresh session opened with the link the first one ended on. The browser writes a bound widget's new
    value into the link (AppTest has no browser): ``chosen`` are those values, as the link spells them."""
    params = {k: v for k, v in at.query_params.items() if isinstance(v, str)}
    return open_page(path, model, **{**params, **chosen})


def forward(bundle, text, **kwargs):
    with torch.no_grad():
        return bundle.model.bert(**bundle.tokenizer(text, return_tensors="pt"), **kwargs)


# --- one head, step by step ----------------------------------------------------------------------


@pytest.mark.parametrize("which, layer, head", [("bundled", 4, 1), ("tiny", 1, 2)])
def test_step_by_step_draws_the_heads_real_numbers(
    open_page, bundled, tiny_bundle, tiny_pretraining_dir, csv_downloads, which, layer, head
):
    bundle, model = (bundled, BUNDLED_MODEL) if which == "bundled" else (tiny_bundle, tiny_pretraining_dir)
    at = open_page(ATTENTION, model, tab="Step by step", layer=str(layer), head=str(head))
    assert not at.exception, at.exception
    query = at.selectbox(key="step_query").value
    assert query == 10  # the default sentence's preset follows "it"
    ref = reference_head(bundle, SEED_FIRST, layer, head, query)
    drawn = charts(at)  # one step a tab: the first is open, the others drawn when opened
    for part in STEP_PARTS[1:3]:
        drawn |= charts(
            open_page(ATTENTION, model, tab="Step by step", layer=str(layer), head=str(head), step_part=part)
        )
    qk = typed(drawn["step_qk"]["data"][0]["z"])
    np.testing.assert_allclose(qk[0], ref["q"].numpy(), atol=2e-5)
    np.testing.assert_allclose(qk[1:], ref["keys"].numpy(), atol=2e-5)
    scores, weights = (typed(trace["y"]) for trace in drawn["step_scores"]["data"])
    np.testing.assert_allclose(scores, ref["scaled"].numpy(), atol=2e-5)
    np.testing.assert_allclose(weights, ref["model_row"].numpy(), atol=1e-6)  # = output_attentions
    values = typed(drawn["step_values"]["data"][0]["z"])
    np.testing.assert_allclose(values[:-1], (ref["weights"][:, None] * ref["values"]).numpy(), atol=2e-5)
    np.testing.assert_allclose(values[-1], ref["model_output"].numpy(), atol=2e-5)  # the head's slice of the output
    table = frame(
        open_page(ATTENTION, model, tab="Step by step", layer=str(layer), head=str(head), step_part=STEP_PARTS[3]),
        "softmax weight",
    )
    np.testing.assert_allclose(table["softmax weight"], ref["model_row"].numpy(), atol=1e-6)
    assert (table["mask term"] == 0).all()
    assert "Equal up to float32 rounding" in at.success[0].value
    assert f"encoder layer {layer}, head {head}** computes" in text_of(at) and "numbered from 0" in text_of(at)
    assert f"hidden state {layer} (" in text_of(at) and f"`hidden_states[{layer}]`" in text_of(at)
    # The worked example under the steps: the key with the largest weight, its q·k, then q·k / √d (not q·k again).
    d = ref["q"].shape[0]
    best = int(ref["weights"].argmax())
    dot = float(ref["q"] @ ref["keys"][best])
    assert_shows(text_of(at), f"q·k = {{}}; ÷ √{d} → {{}};", dot, dot / np.sqrt(d), places=4)
    assert_shows(text_of(at), "softmax → {}, the largest weight", ref["model_row"][best].item(), places=4)
    # "Download every vector": each row named by the tokenizer's token at its position, with its real numbers.
    tokens = bundle.tokenizer.tokenize(SEED_FIRST, add_special_tokens=True)
    vectors = csv_downloads[f"step-vectors-layer{layer}-head{head}-query{query}"]
    assert vectors["vector"].tolist() == ["query"] + ["key"] * len(tokens) + ["value"] * len(tokens) + ["output"]
    assert vectors["token"].tolist() == [tokens[query], *tokens, *tokens, tokens[query]]
    assert vectors["position"].tolist() == [query, *range(len(tokens)), *range(len(tokens)), query]
    numbers = vectors[[f"d{j}" for j in range(d)]].to_numpy()
    np.testing.assert_allclose(numbers[0], ref["q"].numpy(), atol=2e-5)
    np.testing.assert_allclose(numbers[1 : 1 + len(tokens)], ref["keys"].numpy(), atol=2e-5)
    np.testing.assert_allclose(numbers[1 + len(tokens) : -1], ref["values"].numpy(), atol=2e-5)
    np.testing.assert_allclose(numbers[-1], ref["model_output"].numpy(), atol=2e-5)


def test_step_by_step_link_reproduces_the_chosen_query(open_page, bundled):
    at = open_page(ATTENTION, tab="Step by step", layer="2", head="5", step_part=STEP_PARTS[1])
    at.selectbox(key="step_query").set_value(3).run()
    again = reopen(open_page, at, ATTENTION, BUNDLED_MODEL, step_query="3 didn")
    assert again.selectbox(key="step_query").value == 3
    assert charts(again)["step_scores"] == charts(at)["step_scores"]
    ref = reference_head(bundled, SEED_FIRST, 2, 5, 3)
    np.testing.assert_allclose(typed(charts(again)["step_scores"]["data"][1]["y"]), ref["model_row"].numpy(), atol=1e-6)


def test_step_by_step_needs_one_head(open_page):
    at = open_page(ATTENTION, tab="Step by step", mean="true")
    assert not at.exception and "follows one head: turn off averaging" in text_of(at) and not charts(at)
    # Under rollout the averaging switch is greyed out (QA: the message asked to turn it off all the same)
    at = open_page(ATTENTION, tab="Step by step", view="Rollout")
    said = text_of(at)
    assert "set **Show** to Raw attention (rollout mixes every head)" in said and "averaging" not in said


# --- compare two sentences -----------------------------------------------------------------------


def test_compare_changes_one_word_of_the_lessons_sentence_too(open_page):
    """The lessons' sentence is seed 000's "couldn't … tired": Compare's default second sentence was "didn't …
    wide", two changes under a label saying "try changing one word"."""
    at = open_page(ATTENTION, text=ANIMAL_TIRED, attn_tab="Compare")
    assert not at.exception and at.text_input(key="compare").value == ANIMAL_WIDE
    [changed] = [c.value for c in at.caption if c.value.startswith("Changed tokens")]
    assert "wide" in changed and "couldn" not in changed and "didn" not in changed  # one word changed


def test_compare_draws_both_sentences_and_their_difference(open_page, bundled, csv_downloads):
    at = open_page(ATTENTION, tab="Compare", layer="3", head="1")
    assert not at.exception, at.exception
    assert at.text_input(key="compare").value == SEED_SECOND  # the seed's pair by default
    first, second = (
        forward(bundled, s, output_attentions=True).attentions[3][0, 1].numpy() for s in (SEED_FIRST, SEED_SECOND)
    )
    drawn = charts(at)
    np.testing.assert_allclose(typed(drawn["compare_first"]["data"][0]["z"]), first, atol=1e-7)
    np.testing.assert_allclose(typed(drawn["compare_second"]["data"][0]["z"]), second, atol=1e-7)
    np.testing.assert_allclose(typed(drawn["compare_difference"]["data"][0]["z"]), second - first, atol=1e-6)
    assert drawn["compare_difference"]["data"][0]["y"][13] == "13 tired→wide"
    row_first, row_second = (typed(trace["y"]) for trace in drawn["compare_row"]["data"])  # "it" in both
    np.testing.assert_allclose(row_first, first[10], atol=1e-7)
    np.testing.assert_allclose(row_second, second[10], atol=1e-7)
    assert "tired → wide" in text_of(at)
    moves = frame(at, "change")
    assert moves["change"].abs().max() == pytest.approx(np.abs(second - first).max(), abs=1e-6)
    # Every move names its query and key ("13 tired→wide": the position leads) and shows each sentence's own weight.
    q, k = (moves[c].map(lambda label: int(label.split(" ", 1)[0])).to_numpy() for c in ("query", "key"))
    np.testing.assert_allclose(moves["first"], first[q, k], atol=1e-7)
    np.testing.assert_allclose(moves["second"], second[q, k], atol=1e-7)
    np.testing.assert_allclose(moves["change"], second[q, k] - first[q, k], atol=1e-6)
    # The whole difference as a CSV: a row per query, a column per key, second − first (not transposed).
    whole = csv_downloads["compare-difference-layer3-head1"]
    tokens_a, tokens_b = (bundled.tokenizer.tokenize(s, add_special_tokens=True) for s in (SEED_FIRST, SEED_SECOND))
    assert whole["query"].tolist() == [
        f"{i} {a}" + ("" if a == b else f"→{b}") for i, (a, b) in enumerate(zip(tokens_a, tokens_b))
    ]
    assert list(whole.columns[1:]) == whole["query"].tolist()
    np.testing.assert_allclose(whole.drop(columns="query").to_numpy(), second - first, atol=1e-6)


def test_compare_with_a_different_length_names_the_unpaired_token(open_page, bundled):
    other = "The animal didn't cross the wide street because it was too tired."
    at = open_page(ATTENTION, tab="Compare", layer="0", head="0", compare=other)
    assert not at.exception
    assert literal("only in the second: 8 wide") in text_of(at)  # user text is shown escaped, literally
    first, second = (
        forward(bundled, s, output_attentions=True).attentions[0][0, 0].numpy() for s in (SEED_FIRST, other)
    )
    pair = [i if i < 8 else i + 1 for i in range(16)]
    np.testing.assert_allclose(
        typed(charts(at)["compare_difference"]["data"][0]["z"]), second[np.ix_(pair, pair)] - first, atol=1e-6
    )
    # Following "it" (10 in the first, 11 in the second): each sentence's row is its own "it"'s, over the pairs.
    assert at.selectbox(key="compare_query").value == 10
    row_first, row_second = (typed(trace["y"]) for trace in charts(at)["compare_row"]["data"])
    np.testing.assert_allclose(row_first, first[10], atol=1e-7)
    np.testing.assert_allclose(row_second, second[11, pair], atol=1e-7)
    again = reopen(open_page, at, ATTENTION, BUNDLED_MODEL)
    assert again.text_input(key="compare").value == other
    assert charts(again)["compare_difference"] == charts(at)["compare_difference"]


# --- mask and see --------------------------------------------------------------------------------


def test_mask_and_see_sets_attention_beside_the_change_of_the_guess(
    open_page, tiny_pretraining_dir, tiny_bundle, masked_lm
):
    at = open_page(
        ATTENTION, tiny_pretraining_dir, tab="Mask and see", text=MASKED, layer="1", head="3", see_scope=EVERY_TOKEN
    )
    assert not at.exception, at.exception
    table = frame(at, "attention received")
    ids = tiny_bundle.tokenizer(MASKED)["input_ids"]
    mask = ids.index(tiny_bundle.tokenizer.mask_token_id)
    assert table["position"].tolist() == [1, 2, 3, 4, 5, 7]
    attentions = forward(tiny_bundle, MASKED, output_attentions=True).attentions[1][0, 3].numpy()
    np.testing.assert_allclose(table["attention received"], attentions[mask, table["position"]], atol=1e-7)
    assert "in encoder layer 1, head 3. High attention" in text_of(at)  # the matrix the table reads
    rollout = open_page(ATTENTION, tiny_pretraining_dir, tab="Mask and see", text=MASKED, layer="1", view="Rollout")
    assert "in rollout through encoder layer 1 (all heads)." in text_of(rollout)  # not "the head you chose"
    with torch.no_grad():
        before = masked_lm(input_ids=torch.tensor([ids])).logits[0, mask].double().softmax(-1)
        for position, effect in zip(table["position"], table.iloc[:, 3]):
            hidden = list(ids)
            hidden[position] = tiny_bundle.tokenizer.mask_token_id
            after = masked_lm(input_ids=torch.tensor([hidden])).logits[0, mask].double().softmax(-1)
            assert effect == pytest.approx(0.5 * (after - before).abs().sum().item(), abs=2e-5)
    received, influence = (typed(trace["y"]) for trace in charts(at)["mask_and_see"]["data"])
    np.testing.assert_allclose(received, table["attention received"], atol=1e-7)
    np.testing.assert_allclose(influence, table.iloc[:, 3], rtol=1e-6)
    # The caption's Spearman: the model's attention against the effect just checked against the model (it read +1.00
    # whatever the head, when attention was correlated with itself).
    rho = spearmanr(attentions[mask, table["position"]], table.iloc[:, 3]).statistic
    assert abs(rho) < 0.99  # this head's order differs: a caption of +1.00 would be wrong
    assert_shows(text_of(at), "between attention received and influence here: {} ", rho, places=2)
    assert "guesses at the 6 \\[MASK\\] token" in text_of(at)


def test_mask_and_see_hides_the_most_attended_token_in_one_more_pass(
    open_page, tiny_pretraining_dir, tiny_bundle, masked_lm
):
    at = open_page(ATTENTION, tiny_pretraining_dir, tab="Mask and see", text=MASKED, layer="1", head="2")
    assert not at.exception, at.exception
    ids = tiny_bundle.tokenizer(MASKED)["input_ids"]
    mask = ids.index(tiny_bundle.tokenizer.mask_token_id)
    hideable = [1, 2, 3, 4, 5, 7]
    row = forward(tiny_bundle, MASKED, output_attentions=True).attentions[1][0, 2, mask].numpy()
    hidden = hideable[int(np.argmax(row[hideable]))]
    assert at.selectbox(key="see_token").value == hidden  # the token this head's [MASK] attends to most
    (bars,) = charts(at)["mask_and_see"]["data"]  # every hideable token's attention; the hidden one named
    np.testing.assert_allclose(typed(bars["y"]), row[hideable], atol=1e-7)
    assert sum(label.endswith("(hidden)") for label in bars["x"]) == 1 and bars["x"][hideable.index(hidden)].startswith(
        f"{hidden} "
    )
    table = frame(at, "attention received")
    assert table["position"].tolist() == [hidden]
    assert "attention rank" not in table and "influence rank" not in table  # one token ranked among itself: 1
    with torch.no_grad():
        before = masked_lm(input_ids=torch.tensor([ids])).logits[0, mask].double().softmax(-1)
        masked = list(ids)
        masked[hidden] = tiny_bundle.tokenizer.mask_token_id
        after = masked_lm(input_ids=torch.tensor([masked])).logits[0, mask].double().softmax(-1)
    assert table.iloc[0, 3] == pytest.approx(0.5 * (after - before).abs().sum().item(), abs=2e-5)
    top_before, top_after = (tiny_bundle.tokenizer.convert_ids_to_tokens(int(p.argmax())) for p in (before, after))
    shown = text_of(at)
    assert f"goes from **{literal(top_before)}" in shown and f"to **{literal(top_after)}" in shown
    assert f"{table.iloc[0, 3]:.4f}" in shown
    # Its attention's rank among every hideable token, 1 = the most attended (the model's own attentions).
    assert_shows(shown, f"**{{}}** of the attention here, rank 1 of {len(hideable)}.", row[hidden], places=4)
    other = next(p for p in hideable if p != hidden)
    link_value = f"{other} {tiny_bundle.tokenizer.convert_ids_to_tokens(ids[other])}"
    again = reopen(open_page, at, ATTENTION, tiny_pretraining_dir, see_token=link_value)
    assert not again.exception and again.selectbox(key="see_token").value == other
    assert frame(again, "attention received")["position"].tolist() == [other]
    rank = 1 + int((row[hideable] > row[other]).sum())
    assert rank > 1  # another token than the most attended: its rank is counted, not 1
    said = f"**{{}}** of the attention here, rank {rank} of {len(hideable)}."
    assert_shows(text_of(again), said, row[other], places=4)


def test_mask_and_see_on_the_bundled_encoder_deletes_from_the_link(open_page, bundled):
    at = open_page(
        ATTENTION,
        tab="Mask and see",
        text="The cat sat on the mat",
        see_mode="Delete the token",
        see_scope=EVERY_TOKEN,
    )
    assert not at.exception, at.exception
    assert at.radio(key="see_mode").value == "Delete the token"
    table = frame(at, "mean cosine distance of the other tokens")
    assert table["token"].tolist() == ["the", "cat", "sat", "on", "the", "mat"]
    ids = bundled.tokenizer("The cat sat on the mat")["input_ids"]
    with torch.no_grad():
        before = bundled.model.bert(input_ids=torch.tensor([ids])).last_hidden_state[0]
        after = bundled.model.bert(input_ids=torch.tensor([ids[:2] + ids[3:]])).last_hidden_state[0]  # "cat" deleted
    cosine = torch.nn.functional.cosine_similarity(before[[0, 1, 3, 4, 5, 6, 7]], after, dim=-1)
    assert table.iloc[1, 3] == pytest.approx((1 - cosine).mean().item(), abs=1e-5)
    again = reopen(open_page, at, ATTENTION, BUNDLED_MODEL)
    assert frame(again, "mean cosine distance of the other tokens").equals(table)
    one = open_page(
        ATTENTION, tab="Mask and see", text="The cat sat on the mat", see_mode="Delete the token", see_token="2 cat"
    )
    assert not one.exception and one.radio(key="see_scope").value == "One token"
    (row,) = frame(one, "mean cosine distance of the other tokens").itertuples(index=False)
    assert row[0] == 2 and row[3] == pytest.approx((1 - cosine).mean().item(), abs=1e-5)


@pytest.mark.parametrize("tab", TABS[5:])
def test_new_tabs_open_on_the_tiny_model_with_a_pair(open_page, tiny_pretraining_dir, tab):
    at = open_page(
        ATTENTION, tiny_pretraining_dir, tab=tab, text="I went to the store.", b="At the store, I bought fruit."
    )
    assert not at.exception, at.exception
    assert charts(at)


# --- fill-mask: guesses at every layer, compare ---------------------------------------------------


@pytest.mark.parametrize(
    "ranks, ticks",
    [
        ([2_600, 30_000], [5_000, 10_000, 20_000]),  # QA's paris: plotly's labels read "3 4 … 9 10k 2 3"
        ([1, 30_000], [1, 10, 100, 1_000, 10_000]),  # 1, 2, 5 × 10^e would be 14 labels: the powers of ten
        ([20_000, 30_000], None),  # one 1-2-5 tick within: plotly's own (whole numbers, by tickformat)
        ([], None),
    ],
)
def test_the_rank_axis_ticks_are_whole_numbers_a_few_to_a_chart(ranks, ticks):
    assert rank_ticks(ranks) == ticks


def test_guesses_at_every_layer_from_the_link(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    at = open_page(FILL_MASK, tiny_pretraining_dir, text=MASKED, k="4", true_word="Paris", fill_tab="Layer by layer")
    assert not at.exception, at.exception
    assert "An approximation" in text_of(at)
    inputs = tiny_bundle.tokenizer(MASKED, return_tensors="pt")
    mask = inputs["input_ids"][0].tolist().index(tiny_bundle.tokenizer.mask_token_id)
    with torch.no_grad():
        states = masked_lm(**inputs, output_hidden_states=True).hidden_states
        probabilities = torch.stack([masked_lm.cls.predictions(s[0, mask]) for s in states]).softmax(-1)
    top = probabilities.topk(4, dim=-1)
    long = frame(at, "token_id")
    assert long["token_id"].tolist() == top.indices.flatten().tolist()
    np.testing.assert_allclose(long["probability"], top.values.flatten().numpy(), rtol=1e-4)
    summary = frame(at, "rank of paris")
    assert summary["after"].tolist() == ["embeddings output", "after encoder layer 0", "after encoder layer 1"]
    paris = tiny_bundle.tokenizer.convert_tokens_to_ids("paris")
    ranks = (1 + (probabilities > probabilities[:, [paris]]).sum(-1)).tolist()
    assert summary["rank of paris"].tolist() == ranks
    best = int(np.argmin(ranks))  # the rank chart's line in words names its best rank (it said where it "peaks")
    words = (
        f"Rank of paris after every layer: from {ranks[0]:,} (embeddings output) to {ranks[-1]:,} "
        f"(after encoder layer 1); best {ranks[best]:,} at {summary['after'][best]}."
    )
    assert f"In words — {literal(words)}" in text_of(at)
    # Its log axis labelled with whole numbers: plotly's own ticks read "3 4 … 9 10k 2 3" (QA), 3 meaning 3,000 at
    # the top and 30,000 at the bottom.
    axis = charts(at)["layer_true_rank"]["layout"]["yaxis"]
    assert axis["tickformat"] == "," and axis.get("tickvals") == rank_ticks(ranks)
    lines = charts(at)["layer_probabilities"]["data"]
    assert len(lines) == 5 and lines[-1]["name"] == "paris (true word)"
    np.testing.assert_allclose(typed(lines[-1]["y"]), probabilities[:, paris].numpy(), rtol=1e-4)
    # The last row is the Guesses tab's own table (the same link, the first tab).
    guesses = open_page(FILL_MASK, tiny_pretraining_dir, text=MASKED, k="4")
    own = frame(guesses, "decoded")
    last = long[long["hidden state"] == 2]
    assert last["token_id"].tolist() == own["token_id"].tolist()
    np.testing.assert_allclose(last["probability"], own["probability"], rtol=1e-5)


@pytest.mark.parametrize(
    ("page", "params"),
    [
        (ATTENTION, {"attn_tab": "Compare", "text": "The cat sat.", "compare": "The dog sat. " + "x " * 600}),
        (
            FILL_MASK,
            {
                "fill_tab": "Compare two sentences",
                "text": "The capital of France is [MASK].",
                "fill_compare": "The capital of Italy is [MASK]. " + "x " * 600,
            },
        ),
    ],
)
def test_a_second_sentence_over_the_token_limit_says_so(open_page, tiny_pretraining_dir, tiny_bundle, page, params):
    """The first sentence said it was cut to the model's limit; the second was cut without a word."""
    at = open_page(page, tiny_pretraining_dir, **params)
    assert not at.exception
    second = next(value for key, value in params.items() if key in ("compare", "fill_compare"))
    tokens = len(tiny_bundle.tokenizer(second)["input_ids"])
    limit = tiny_bundle.capabilities.max_positions
    assert tokens > limit
    notice = (
        f"The second sentence is {tokens} tokens long; the model reads at most {limit}. {limit} tokens are analysed"
    )
    assert any(w.value.startswith(notice) for w in at.warning)


def test_compare_two_masked_sentences(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    first, second = "The animal was too [MASK].", "The street was too [MASK]."
    at = open_page(FILL_MASK, tiny_pretraining_dir, text=first, k="3", fill_tab="Compare two sentences")
    assert not at.exception and "Type a second sentence" in text_of(at)
    at.button(key="fill_compare_copy").click().run()
    assert at.text_input(key="fill_compare").value == first
    at.text_input(key="fill_compare").input("The street was too wide.").run()  # no mask: it asks for one there
    assert [i.value for i in at.info] == [
        "A [MASK] is needed: put [MASK] where BERT should guess a word in the second sentence."
    ]
    at.text_input(key="fill_compare").input(second).run()
    assert not at.exception
    table = frame(at, "change (second − first)")
    expected = []
    for text in (first, second):
        inputs = tiny_bundle.tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            logits = masked_lm(**inputs).logits[
                0, inputs["input_ids"][0].tolist().index(tiny_bundle.tokenizer.mask_token_id)
            ]
        expected.append(logits.double().softmax(-1).numpy())
    np.testing.assert_allclose(table["P (first)"], expected[0][table["token_id"]], rtol=1e-4)
    np.testing.assert_allclose(table["P (second)"], expected[1][table["token_id"]], rtol=1e-4)
    # Each sentence's own guesses chart: its top-k tokens and probabilities, from the model's MLM logits.
    for name, probabilities in zip(("first", "second"), expected):
        (guesses,) = charts(at)[f"fill_compare_{name}"]["data"]
        top = np.argsort(-probabilities, kind="stable")[:3]
        assert guesses["y"] == tiny_bundle.tokenizer.convert_ids_to_tokens(top.tolist()), name
        np.testing.assert_allclose(guesses["x"], probabilities[top], rtol=1e-4)  # a plain list here
    bars = charts(at)["fill_compare_difference"]["data"]
    np.testing.assert_allclose(typed(bars[1]["x"]), table["P (second)"], rtol=1e-6)
    assert "animal → street" in text_of(at)
    again = reopen(open_page, at, FILL_MASK, tiny_pretraining_dir, fill_compare=second)
    assert again.text_input(key="fill_compare").value == second
    assert frame(again, "change (second − first)").equals(table)

    # A mask typed before the first's: its mask 1 is compared with the second's mask 2, in its place (token 6).
    at.text_input(key="fill_compare").input("[MASK] animal was too [MASK].").run()
    assert "Mask 1 of the first sentence is in the place of mask 2 of the second." in text_of(at)
    ids = tiny_bundle.tokenizer("[MASK] animal was too [MASK].")["input_ids"]
    later = reference_guesses(masked_lm, ids, 5)  # its second mask, in the place of the first's (token 5)
    assert ids[5] == tiny_bundle.tokenizer.mask_token_id
    table = frame(at, "change (second − first)")
    np.testing.assert_allclose(table["P (second)"], later[table["token_id"]], rtol=1e-4)
    assert chart_title(charts(at)["fill_compare_second"]) == "Second sentence — mask 2"
    at.text_input(key="fill_compare").input("[MASK] animal was too tired.").run()  # no mask in its place
    assert "no [MASK] in the place of mask 1 (token 5 of the first): guesses are compared mask for mask" in " ".join(
        i.value for i in at.info
    )
    assert "fill_compare_difference" not in charts(at)  # nothing compared at another place


def test_layer_by_layer_follows_the_chosen_mask(open_page, tiny_pretraining_dir, tiny_bundle, masked_lm):
    """With two masks and "At mask" 2, every layer's guesses are those at the second [MASK], not the first."""
    text = "The capital of [MASK] is [MASK]."
    at = open_page(FILL_MASK, tiny_pretraining_dir, text=text, k="4", at_mask="2", fill_tab="Layer by layer")
    assert not at.exception, at.exception
    assert at.selectbox(key="at_mask").value == 2
    inputs = tiny_bundle.tokenizer(text, return_tensors="pt")
    masks = [i for i, t in enumerate(inputs["input_ids"][0].tolist()) if t == tiny_bundle.tokenizer.mask_token_id]
    with torch.no_grad():
        states = masked_lm(**inputs, output_hidden_states=True).hidden_states
        probabilities = [
            torch.stack([masked_lm.cls.predictions(s[0, mask]) for s in states]).softmax(-1) for mask in masks
        ]
    top = [p.topk(4, dim=-1) for p in probabilities]
    assert top[0].indices.tolist() != top[1].indices.tolist()  # the two masks' guesses differ: the test can tell
    long = frame(at, "token_id")
    assert long["token_id"].tolist() == top[1].indices.flatten().tolist()
    np.testing.assert_allclose(long["probability"], top[1].values.flatten().numpy(), rtol=1e-4)
    figure = charts(at)["layer_probabilities"]
    assert chart_title(figure).startswith("Mask 2:")
    final = top[1].indices[-1].tolist()  # the last layer's top guesses, followed through every layer
    for line, token_id in zip(figure["data"], final, strict=True):
        np.testing.assert_allclose(typed(line["y"]), probabilities[1][:, token_id].numpy(), rtol=1e-4)


def test_fill_mask_tabs_on_the_bundled_encoder_explain_instead(open_page):
    at = open_page(FILL_MASK, BUNDLED_MODEL, text=MASKED, fill_tab="Layer by layer")
    assert not at.exception and "no masked-language-model (MLM) head" in " ".join(i.value for i in at.info)
    assert not drawn_charts(at)


def test_512_tokens_compare_stays_under_5_mb_and_mask_and_see_keeps_to_its_budget(open_page):
    text = "The animal didn't cross the street because it was too tired. " * 60
    at = open_page(ATTENTION, tab="Compare", text=text, compare=text.replace("tired", "wide"))
    assert not at.exception
    assert 0 < sum(len(c.spec) for c in drawn_charts(at)) < 5_000_000  # three 512 × 512 heatmaps
    at = open_page(ATTENTION, tab="Mask and see", text=text, see_scope=EVERY_TOKEN)
    assert not at.exception
    budget = TOKEN_BUDGET // 512  # variants of 512 tokens that fit the token budget
    assert f"{budget} of the 510 tokens were tested" in " ".join(w.value for w in at.warning)
    assert len(frame(at, "attention received")) == budget


def test_compare_says_when_no_token_has_a_partner(open_page):
    """It said "pick another" where every token gave the same answer."""
    at = open_page(ATTENTION, tab="Compare", text="I love 🍕 and pizza", compare="Completely different words here")
    assert not at.exception
    assert any(i.value.startswith("No token of your sentence has a partner in the second one") for i in at.info)
    assert "pick another" not in text_of(at)


def test_compare_follows_a_token_both_sentences_have_by_default(open_page):
    at = open_page(ATTENTION, tab="Compare", text="The cat sat on the mat.")  # the default second sentence differs
    assert not at.exception and "That token has no partner" not in text_of(at)
    query = at.selectbox(key="compare_query").value
    tokens = at.selectbox(key="compare_query").options
    assert 0 < query < len(tokens) - 1  # a token of the text, not [CLS] or [SEP]
    assert "compare_row" in charts(at)  # its row in both sentences is drawn
