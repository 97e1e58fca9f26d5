"""The lesson "BERT and its successors" walked in AppTest on two tiny random models (``tests/conftest.py``'s
``family_dir``): a BERT active and a RoBERTa beside it, the two a hosted server's allowlist. The weights are random:
every answer and number is checked against the models' own (``DirectLive`` with both, transformers' pipeline through
``tests/core/test_comparison.py``), not against what real checkpoints predict."""

from __future__ import annotations

import numpy as np
import pytest

from bertlens.curriculum import LESSONS
from bertlens.lessons import DirectLive, side
from bertlens.models import load_model
from components.services.text import literal
from components.state.model_choice import SECOND_MODEL
from tests.conftest import tables
from tests.pages.test_lessons_page import app, shown

LESSON = LESSONS["successors"]


@pytest.fixture
def two_models(monkeypatch, family_dir) -> tuple[str, str]:
    """A hosted server offering exactly a tiny BERT (the one loaded) and a tiny RoBERTa."""
    bert, roberta = str(family_dir("bert")), str(family_dir("roberta"))
    monkeypatch.setenv("BERTLENS_HOSTED", "1")
    monkeypatch.setenv("BERTLENS_ALLOWED_MODELS", f"{bert},{roberta}")
    return bert, roberta


def test_the_lesson_walks_on_two_tiny_models_and_every_answer_is_theirs(monkeypatch, two_models):
    bert_dir, roberta_dir = two_models
    bert, roberta = load_model(bert_dir), load_model(roberta_dir)
    live = DirectLive(bert, roberta)
    at = app(monkeypatch, bert_dir)
    at.button(key=f"_lesson_start_{LESSON.key}").click().run()
    for index, step in enumerate(LESSON.steps):
        assert not at.exception, (index, at.exception)
        assert f"step {index + 1} of {len(LESSON.steps)}" in shown(at)
        assert at.title[0].value == "Model anatomy" and step.title in [h.value for h in at.header]
        if step.question is not None:
            key = f"_lesson_{LESSON.key}_{index}"
            assert "Your answer first" in shown(at) and "needs a model with the" not in shown(at)
            expected = step.question.reveal(live).answer
            assert expected in step.question.choices
            [radio] = [r for r in at.radio if r.key == f"{key}_guess"]
            radio.set_value(expected)
            at.button(key=f"{key}_check").click().run()
            assert not at.exception, (index, at.exception)
            assert any("so does the live computation" in s.value for s in at.success), index
        assert "Your answer first" not in shown(at)
        assert at.selectbox(key=SECOND_MODEL).value == roberta_dir  # a successor of the BERT loaded, by default
        text = at.text_input(key="text").value
        sides = [side(DirectLive(one), text) for one in (bert, roberta)]
        drawn = [t.value for t in at.text]
        metrics = [m.value for m in at.metric]
        for one in sides:
            assert " ".join(one.tokens) in drawn
            assert f"{one.total:,}" in metrics
            assert one.guesses  # both tiny models have an MLM head, and the step's sentence a mask
            assert f"**Top {len(one.guesses)} for the first mask:** {literal(one.guesses[0][0])} first" in shown(at)
            [guesses] = [t for t in tables(at) if "guess" in t and list(t["guess"]) == [w for w, _ in one.guesses]]
            np.testing.assert_allclose(guesses["probability"], [p for _, p in one.guesses])
            [parts] = [t for t in tables(at) if "part" in t and int(t["parameters"].iloc[-1]) == one.total]
            assert list(zip(parts["part"], parts["parameters"]))[:-1] == list(one.parts)
        if index < len(LESSON.steps) - 1:
            at.button(key="_lesson_next").click().run()
    assert "Last step of this lesson" in shown(at)
