"""The lessons as data: every step opens a real page with declared, valid parameters; every question's
answer is the model's own output (compared with a reference computation), or says which head is missing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import silhouette_score
from transformers import BertForPreTraining

from bertlens import curriculum, lessons
from bertlens.analysis import encode
from bertlens.anatomy import parameter_counts
from bertlens.attention import STATISTICS, VIEWS
from bertlens.curriculum import LESSONS
from bertlens.layers import encoder_layer_label, hidden_state_label
from bertlens.lessons import (
    COMPARED,
    AttendsMore,
    BestSeparation,
    CloserInContext,
    DirectLive,
    FillMaskTop1,
    LargestPart,
    LessPadding,
    MaskMatters,
    MoreParameters,
    MoreTokens,
    NextSentenceVerdict,
    PairTask,
    ParameterCount,
    SameFirstGuess,
    StrongestHead,
    resolve,
)
from bertlens.pages import TOOL_PAGES
from bertlens.sense_presets import PRESETS
from bertlens.senses import embed_word, layer_options, separation_by_layer
from bertlens.synthetic import random_bert_config
from bertlens.tokenization import STRATEGIES
from bertlens.wording import percent
from components.state.params import PAGES, PARAMS, SHARED
from components.views.anatomy import sections as anatomy_views
from components.views.attention import sections as attention_views
from components.views.fill_mask.sections import FILL_MASK_TABS
from components.views.next_sentence.sections import NSP_TABS
from components.views.senses import sections as senses_views
from components.views.tokenizer import sections as tokenizer_views
from tests.conftest import assert_shows, renderings
from tests.core.test_mlm import reference_fill_mask
from tests.core.test_senses import model_vectors

TABS = {
    "tokenizer_tab": tokenizer_views.TABS,
    "anatomy_tab": anatomy_views.TABS,
    "fill_tab": FILL_MASK_TABS,
    "nsp_tab": NSP_TABS,
    "attn_tab": attention_views.TABS,
    "senses_tab": senses_views.TABS,
    "source": senses_views.SOURCES,
    "preset": tuple(senses_views.PRESETS),
    "view": tuple(VIEWS.values()),
    "stat": tuple(statistic.label for statistic in STATISTICS),
    "pad": STRATEGIES,
}
STEPS = [(lesson, i, step) for lesson in LESSONS.values() for i, step in enumerate(lesson.steps)]
IDS = [f"{lesson.key}-{i + 1}" for lesson, i, _ in STEPS]


def test_lessons_follow_the_notebooks_and_have_questions():
    # seeds 000 … 004, then the comparison of BERT and a successor (issue 51)
    assert list(LESSONS) == ["discover", "senses", "patterns", "overview", "inside", "successors"]
    kinds = {type(s.question) for lesson in LESSONS.values() for s in lesson.steps if s.question}
    assert kinds == {
        FillMaskTop1,
        NextSentenceVerdict,
        AttendsMore,
        StrongestHead,
        LessPadding,
        MaskMatters,
        CloserInContext,
        BestSeparation,
        ParameterCount,
        LargestPart,
        MoreTokens,
        MoreParameters,
        SameFirstGuess,
        PairTask,
    }
    for lesson in LESSONS.values():
        assert len(lesson.steps) >= 2 and all(step.text.strip() for step in lesson.steps)


@pytest.mark.parametrize("num_layers", [2, 6, 12])
@pytest.mark.parametrize(("lesson", "index", "step"), STEPS, ids=IDS)
def test_every_step_sets_declared_valid_parameters(lesson, index, step, num_layers, tiny_bundle):
    assert step.page in PAGES
    for name, value in resolve(step.params, num_layers).items():
        param = PARAMS[name]  # declared in components/state/params.py
        assert param.scope in (SHARED, step.page), (name, step.page)
        assert isinstance(value, list) == param.multi, name
        values = value if isinstance(value, list) else [value]
        for one in values:
            assert "{" not in one, f"unresolved {one}"
            if param.kind is int:
                assert int(one) >= 0
            if param.kind is bool:
                assert one in ("true", "false")
        if name in TABS:
            assert value in TABS[name], (name, value)
        if name == "attn_layer":
            assert 0 <= int(value) < num_layers
        if name == "senses_layer":
            assert value in layer_options(num_layers)
        if name in ("token", "targets"):  # "position token" must be that token of the step's sentence
            tokens = encode(tiny_bundle.tokenizer, str(step.params["text"])).tokens
            for one in values:
                position, token = one.split(" ", 1)
                assert tokens[int(position)] == token, (one, tokens)


QUESTION_STEPS = [(lesson, i, step) for lesson, i, step in STEPS if step.question]


@pytest.mark.parametrize(
    ("lesson", "index", "step"), QUESTION_STEPS, ids=[f"{s[0].key}-{s[1] + 1}" for s in QUESTION_STEPS]
)
def test_a_question_shows_the_sentences_it_is_about(lesson, index, step):
    """The page waits for the answer (it would show it), and with it the page's sentence inputs: the question
    itself must show each sentence the step opens the page with."""
    question = step.question
    shown = [text for _, text in question.given] + [question.prompt, *question.choices]
    for name in ("text", "a", "b"):
        if name in step.params:
            assert any(str(step.params[name]) in text for text in shown), (name, step.params[name])
    assert len({label for label, _ in question.given}) == len(question.given)


@pytest.mark.parametrize(("lesson", "index", "step"), STEPS, ids=IDS)
def test_a_steps_outlined_control_is_one_of_its_pages(lesson, index, step):
    if step.control:
        assert PARAMS[step.control].scope in (SHARED, step.page), (step.control, step.page)


def test_fill_mask_check_is_the_pipelines_top_guess(tiny_bundle, masked_lm):
    live = DirectLive(tiny_bundle)
    questions = [s.question for _, _, s in STEPS if isinstance(s.question, FillMaskTop1)]
    assert questions
    for question in questions:
        reveal = question.reveal(live)
        ref = reference_fill_mask(masked_lm, tiny_bundle.tokenizer, question.text, 3)[0]
        top = ref[0]["token_str"]
        assert reveal.answer == top.strip()
        assert reveal.judge(f"  {top.upper()} ") is True and reveal.judge("zzzz") is False
        # Each runner-up with its own probability (the pipeline's, in the page's format).
        assert any(f"with probability {p};" in reveal.detail for p in renderings(ref[0]["score"], percent))
        runners = ", ".join(f"{r['token_str'].strip()} ({percent(r['score'])})" for r in ref[1:])
        assert f"next come {runners}." in reveal.detail


def test_attention_check_is_the_models_own_weights(tiny_bundle):
    question = AttendsMore(curriculum.ANIMAL_TIRED, "it", ("animal", "street"))
    reveal = question.reveal(DirectLive(tiny_bundle))
    inputs = tiny_bundle.tokenizer(question.text, return_tensors="pt")
    with torch.no_grad():
        attentions = tiny_bundle.model.bert(**inputs, output_attentions=True).attentions
    weights = attentions[-1][0].mean(0)[10]  # "it" is token 10; animal 2, street 8
    expected = "animal" if weights[2] > weights[8] else "street"
    assert reveal.answer == expected
    assert_shows(reveal.detail, "“animal” {} and “street” {}", float(weights[2]), float(weights[8]), places=3)
    assert "encoder layer 1" in reveal.detail


def test_separation_check_is_the_best_hidden_state(tiny_bundle):
    reveal = BestSeparation("apple").reveal(DirectLive(tiny_bundle))
    preset = PRESETS["apple"]
    words = embed_word(tiny_bundle, [s.sentence for s in preset.sentences], "apple")
    labels = [preset.sentences[o.sentence_index].sense for o in words.occurrences]
    scores = np.array([s if s is not None else -np.inf for s in separation_by_layer(words.contextual, labels)])
    best = int(np.argmax(scores))
    assert reveal.answer == lessons.third_of(best, 3)  # hidden states 0, 1, 2
    assert_shows(reveal.detail, f"peaks at {hidden_state_label(best)}: {{}}", scores[best], places=3)


def test_separation_check_names_the_silhouette_at_the_embeddings_output(bundled):
    """ "At the embeddings output it is …": sklearn's silhouette of the preset's senses on the model's own
    hidden_states[0], and the peak the same over every hidden state (MiniLM: 7 hidden states)."""
    reveal = BestSeparation("apple").reveal(DirectLive(bundled))
    preset = PRESETS["apple"]
    sentences = [s.sentence for s in preset.sentences]
    assert all(len(re.findall(r"\bapple\b", s, re.IGNORECASE)) == 1 for s in sentences)  # one vector each
    reference = model_vectors(bundled, sentences, "apple")
    labels = [s.sense for s in preset.sentences]
    scores = [silhouette_score(reference[:, h], labels, metric="cosine") for h in range(reference.shape[1])]
    assert abs(scores[0] - scores[1]) > 1e-3  # the check below can tell hidden state 0 from 1
    best = int(np.argmax(scores))
    assert_shows(
        reveal.detail,
        f"peaks at {hidden_state_label(best)}: {{}}; at the embeddings output it is {{}}.",
        scores[best],
        scores[0],
        places=3,
    )
    assert reveal.answer == lessons.third_of(best, reference.shape[1])


def test_third_of_splits_the_hidden_states():
    assert [lessons.third_of(h, 13) for h in (0, 4, 5, 9, 12)] == [
        "early (first third)",
        "early (first third)",
        "middle third",
        "late (last third)",
        "late (last third)",
    ]
    assert [lessons.third_of(layer, 2) for layer in (0, 1)] == ["early (first third)", "late (last third)"]


def test_encoder_only_model_says_what_is_missing(bundled):
    live = DirectLive(bundled)
    for _, _, step in STEPS:
        if step.question is None:
            continue
        reveal = step.question.reveal(live)
        if isinstance(step.question, FillMaskTop1 | NextSentenceVerdict):
            assert reveal.answer is None and reveal.judge("cat") is None
            head = "MLM" if isinstance(step.question, FillMaskTop1) else "NSP"
            assert f"needs a model with the {head} head" in reveal.detail
        elif isinstance(step.question, COMPARED):  # no model beside it here: said, as a missing head is
            assert reveal.answer is None and "needs a model with the active one beside it" in reveal.detail
        else:
            assert reveal.answer in step.question.choices  # attention and senses need no head


def test_lesson_step_reads_the_url():
    assert curriculum.lesson_step("nope", "1") is None and curriculum.lesson_step(None, None) is None
    lesson, index = curriculum.lesson_step("discover", "3")
    assert lesson.key == "discover" and index == 2
    assert curriculum.lesson_step("discover", "99")[1] == len(lesson.steps) - 1
    assert curriculum.lesson_step("discover", "x")[1] == 0
    assert curriculum.lesson_step("discover", "-4")[1] == 0


def questions_of(kind: type) -> list:
    found = [s.question for _, _, s in STEPS if isinstance(s.question, kind)]
    assert found, kind
    return found


def test_next_sentence_check_is_the_nsp_heads_verdict(tiny_bundle):
    for question in questions_of(NextSentenceVerdict):
        reveal = question.reveal(DirectLive(tiny_bundle))
        inputs = tiny_bundle.tokenizer(question.a, question.b, return_tensors="pt")
        with torch.no_grad():
            p = tiny_bundle.model(**inputs).seq_relationship_logits[0].softmax(-1)
        assert reveal.answer == question.choices[0 if p[0] >= p[1] else 1]
        assert_shows(reveal.detail, "IsNext {}% and NotNext {}%.", float(p[0]), float(p[1]), places=1, percent=True)


def same_token_keys(ids: list[int], segments: list[int | None], q: int, other_only: bool) -> list[int]:
    """The text positions holding token ``q``'s id elsewhere (in the other sentence only, with ``other_only``)."""
    return [
        k
        for k in range(len(ids))
        if k != q and ids[k] == ids[q] and segments[k] is not None and (segments[k] != segments[q] or not other_only)
    ]


def test_strongest_head_check_is_the_attention_itself(tiny_bundle):
    """Reference: the next/previous-token share straight from the model's attentions, text tokens only."""
    for question in questions_of(StrongestHead):
        reveal = question.reveal(DirectLive(tiny_bundle))
        inputs = tiny_bundle.tokenizer(question.text, question.text_b, return_tensors="pt")
        with torch.no_grad():
            att = torch.stack(tiny_bundle.model.bert(**inputs, output_attentions=True).attentions)[:, 0]
        text_rows = [i for i, s in enumerate(inputs.sequence_ids()) if s is not None]
        ids, segments = inputs.input_ids[0].tolist(), inputs.sequence_ids()
        if question.statistic in ("next", "previous"):
            shift = 1 if question.statistic == "next" else -1
            rows = [i for i in text_rows if 0 <= i + shift < att.shape[-1]]
            share = torch.stack([att[:, :, i, i + shift] for i in rows]).mean(0)
        else:  # attention to the same token at other positions (of the other sentence only: other_sentence)
            other_only = question.statistic == "other_sentence"
            keys = {q: same_token_keys(ids, segments, q, other_only) for q in text_rows}
            share = torch.stack([att[:, :, q, ks].sum(-1) for q, ks in keys.items() if ks]).mean(0)
        layer, head = divmod(int(share.argmax()), share.shape[1])
        statistic = lessons.STATISTIC_BY_KEY[question.statistic]
        template = f"head {head} of {encoder_layer_label(layer)}: {{}}%, its {statistic.explanation}. "
        assert_shows(reveal.detail, template, float(share[layer, head]), places=1, percent=True)
        assert "((" not in reveal.detail and "))" not in reveal.detail  # "(… (pairs only))" was nested
        assert reveal.answer == lessons.third_of(layer, att.shape[0])
    assert {q.statistic for q in questions_of(StrongestHead)} >= {"same_token", "other_sentence"}


def test_padding_check_is_the_notebooks_own_count(tiny_bundle):
    """Seed 003, exercise 2: the share of the attention mask that is 0, padding to the longest and to max_length 64."""
    (question,) = questions_of(LessPadding)
    reveal = question.reveal(DirectLive(tiny_bundle))
    lines = list(question.lines)

    def padding_share(**padding) -> float:
        mask = tiny_bundle.tokenizer(lines, truncation=True, return_tensors="pt", **padding)["attention_mask"]
        return 100 * (mask == 0).sum().item() / mask.numel()

    longest, fixed = padding_share(padding="longest"), padding_share(padding="max_length", max_length=64)
    assert (f"{longest:.2f}", f"{fixed:.2f}") == ("48.75", "83.98")  # as the notebook prints them
    assert f"{longest:.2f} % of it [PAD]" in reveal.detail and f"{fixed:.2f} % [PAD]" in reveal.detail
    assert "4 × 20" in reveal.detail and "4 × 64" in reveal.detail  # the notebook's shapes
    assert reveal.answer == "padding='longest'" == question.choices[0]


def test_mask_check_is_the_batch_run_with_and_without_the_mask(tiny_bundle):
    (question,) = questions_of(MaskMatters)
    reveal = question.reveal(DirectLive(tiny_bundle))
    batch = tiny_bundle.tokenizer(
        list(question.lines), padding="max_length", max_length=question.max_length, truncation=True, return_tensors="pt"
    )
    padding = (batch["attention_mask"] == 0).sum(dim=1).tolist()
    assert len(set(padding)) == len(padding)  # distinct counts: a count paired with another line would show
    with torch.no_grad():
        with_mask = tiny_bundle.model.bert(**batch).last_hidden_state[:, 0]
        batch["attention_mask"] = torch.ones_like(batch["attention_mask"])
        without = tiny_bundle.model.bert(**batch).last_hidden_state[:, 0]
    distances = (with_mask - without).norm(dim=-1)
    assert reveal.answer == question.lines[int(distances.argmax())]
    each = "; ".join(f"{{}} with {pad} padding tokens" for pad in padding)
    assert_shows(reveal.detail, f"without the mask: {each}.", *distances.tolist(), places=3)
    assert float(distances.min()) < 1e-5  # the longest sentence has no padding: it does not move


def test_reference_check_compares_the_word_across_sentences(tiny_bundle):
    """Seed 004's comparison: python's last hidden state in each sentence against the reference word read alone
    (asked the other way, within one sentence, bert-base-uncased's own numbers would say the coder's python is
    closer to "snake": 0.584 against 0.561)."""

    def last_state(text: str, word: str) -> torch.Tensor:
        inputs = tiny_bundle.tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            states = tiny_bundle.model.bert(**inputs).last_hidden_state[0]
        pieces = tiny_bundle.tokenizer.tokenize(word)
        tokens = tiny_bundle.tokenizer.convert_ids_to_tokens(inputs["input_ids"][0])
        start = next(i for i in range(len(tokens)) if tokens[i : i + len(pieces)] == pieces)
        return states[start : start + len(pieces)].mean(0)

    questions = questions_of(CloserInContext)
    assert [(q.sentences, q.reference) for q in questions] == [
        ((curriculum.PET, curriculum.CODING), "snake"),  # the notebook: 0.693 in the pet's, 0.584 in the coder's
        ((curriculum.PET, curriculum.CODING), "programming"),  # 0.499 in the pet's, 0.561 in the coder's
    ]
    for question in questions:
        reveal = question.reveal(DirectLive(tiny_bundle))
        reference = last_state(question.reference, question.reference)
        sims = [float(torch.cosine_similarity(last_state(s, "python"), reference, dim=0)) for s in question.sentences]
        assert reveal.answer == question.sentences[int(np.argmax(sims))]
        pet, coding = question.sentences
        assert_shows(reveal.detail, f"in “{pet}” {{}} and in “{coding}” {{}}", *sims, places=3)


def test_parameter_check_counts_the_checkpoint(tiny_bundle, bundled):
    reveal = ParameterCount().reveal(DirectLive(tiny_bundle))
    total = sum(p.numel() for p in tiny_bundle.model.parameters())  # tiny: every head real; tied weights once
    assert reveal.answer == "under 10 million" and f"{total:,}" in reveal.detail
    minilm = ParameterCount().reveal(DirectLive(bundled))
    encoder = sum(p.numel() for p in bundled.model.bert.parameters())  # random heads are not the checkpoint's
    assert minilm.answer == "10 to 100 million" and f"{encoder:,}" in minilm.detail


def test_largest_part_counts_embeddings_layers_and_heads(bundled):
    reveal = LargestPart().reveal(DirectLive(bundled))
    bert = bundled.model.bert
    embeddings = sum(p.numel() for p in bert.embeddings.parameters())
    layers = sum(p.numel() for p in bert.encoder.parameters())
    assert embeddings > layers and reveal.answer == "the embeddings"  # MiniLM: a 30,522 × 384 vocabulary
    assert f"the embeddings {embeddings:,}" in reveal.detail and f"the encoder layers {layers:,}" in reveal.detail
    base = parameter_counts(BertForPreTraining(random_bert_config()))  # bert-base's shapes: 85 M of 110 M in layers
    assert LargestPart().reveal(CountsOnly(base)).answer == "the encoder layers"


def test_largest_part_counts_the_pooler_with_the_heads(tiny_bundle):
    """The parts on top are the pooler, the MLM head and the NSP head: the checkpoint's own named parameters (tied
    weights once: the MLM decoder is the word-embedding matrix, counted with the embeddings)."""
    named = dict(tiny_bundle.model.named_parameters())
    assert any(name.startswith("bert.pooler.") for name in named) and "cls.seq_relationship.weight" in named

    def numel(*prefixes: str) -> int:
        return sum(p.numel() for name, p in named.items() if name.startswith(prefixes))

    total = numel("")
    parts = [numel("bert.embeddings."), numel("bert.encoder."), numel("bert.pooler.", "cls.")]
    assert sum(parts) == total
    reveal = LargestPart().reveal(DirectLive(tiny_bundle))
    numbers = "; ".join(f"{part} {n:,} ({n / total:.0%})" for part, n in zip(lessons.PARTS, parts))
    assert f": {numbers}. Most sit in **the embeddings**." in reveal.detail
    assert reveal.answer == lessons.PARTS[0]


@dataclass(frozen=True)
class CountsOnly:
    """A ``Live`` for questions that only count parameters."""

    counts: pd.DataFrame
    bundle: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(name="bert-base-sized"))

    def parameter_counts(self) -> pd.DataFrame:
        return self.counts


def test_every_step_opens_a_registered_page_that_shows_the_model():
    assert {step.page for _, _, step in STEPS} <= set(TOOL_PAGES)
