"""Text a student reads: no internal labels, and a lead read in one breath.

The course notebooks are "seed 000" … "seed 004" to engineers, and files such as ``Discover_BERT.ipynb``; a student
knows them by their titles. No string a student can see names a notebook by its seed number or file name: every
field of every lesson, the attention patterns' notes and presets' hints, the word-sense presets, and every string
constant of the code the app runs (comments and docstrings, the engineers', may keep them). A callout's lead
(``first_words(callout, 40)``) and a step text's (``first_words(text, 45)``) is what a projector shows before "More".
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bertlens.attention import PATTERNS, PRESETS, preset_hint
from bertlens.curriculum import LESSONS
from bertlens.lessons import GET_THE_HEADS
from bertlens.sense_presets import PRESETS as SENSE_PRESETS
from bertlens.wording import first_words
from components.views.fill_mask.sections import LAYER_CAVEAT, PRETRAINING_NOTE

ROOT = Path(__file__).resolve().parents[2]
# "seed 000", "Seed 003's", "seeds 000, 001", "seed notebook 004", "the seeds'", "Notebook 000", "Discover_BERT.ipynb".
INTERNAL = re.compile(
    r"\bseeds?\s+(?:notebooks?\s+)?\d|\bseed\s+notebook|\bseeds?['’]|\bnotebook\s+\d{3}|\.ipynb\b", re.I
)
# The code students' pages run: the core, the Streamlit layers, the pages and the app.
SHOWN_CODE = [
    ROOT / "app.py",
    *(p for folder in ("bertlens", "components", "pages") for p in (ROOT / folder).rglob("*.py")),
]

CALLOUT_WORDS, STEP_WORDS = 40, 45
STEPS = [(lesson, i, step) for lesson in LESSONS.values() for i, step in enumerate(lesson.steps)]
IDS = [f"{lesson.key}-{i + 1}" for lesson, i, _ in STEPS]
CALLOUTS = [(f"{key}-callout-{j + 1}", c) for key, (_, _, step) in zip(IDS, STEPS) for j, c in enumerate(step.callouts)]
OTHER_CALLOUTS = {"GET_THE_HEADS": GET_THE_HEADS, "PRETRAINING_NOTE": PRETRAINING_NOTE, "LAYER_CAVEAT": LAYER_CAVEAT}


def strings(value: object) -> Iterator[str]:
    """Every string in ``value``: itself, or in its fields (dataclasses, their properties too), items and keys."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from strings(getattr(value, f.name))
        for name, attribute in vars(type(value)).items():  # a question's prompt, choices and given are properties
            if isinstance(attribute, property):
                yield from strings(getattr(value, name))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings(key)
            yield from strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from strings(item)


def lesson_strings() -> Iterator[str]:
    """Every lesson's title, notebook (the home page and the lesson's line show it), summary, and every field of every
    step: title, text, page, parameters, question (prompt, choices, given) and callouts."""
    for lesson in LESSONS.values():
        yield from strings(lesson)


def data_strings() -> Iterator[str]:
    """What the pages show from the core's data: the patterns' notes (a button's help), the attention presets'
    hints at every depth, the word-sense presets, and where to get the heads."""
    yield from strings(PATTERNS)
    for preset in PRESETS:
        yield from strings(preset)
        yield from (preset_hint(preset, layers) for layers in (2, 6, 12, 24))
    yield from strings(SENSE_PRESETS)
    yield GET_THE_HEADS


def test_the_lessons_name_no_notebook_by_seed_or_file():
    found = [text for text in lesson_strings() if INTERNAL.search(text)]
    assert not found, found
    notebooks = [lesson.notebook for lesson in LESSONS.values()]
    assert len(set(notebooks)) == len(LESSONS) and all(n.startswith("the ") for n in notebooks), notebooks


def test_the_core_data_the_pages_show_names_no_seed():
    found = [text for text in data_strings() if INTERNAL.search(text)]
    assert not found, found


def shown_constants(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Each string constant with its line, but docstrings (a module's, class's or function's first statement);
    an f-string also whole, its placeholders read as 0 (f"seed {n}" is "seed 0")."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            parts = [v.value if isinstance(v, ast.Constant) else "0" for v in node.values]
            yield node.lineno, "".join(str(part) for part in parts)


def test_no_string_the_app_shows_names_a_seed_or_a_notebook_file():
    """Scans the code, not the pages: placeholders, help, captions and messages drawn only on some inputs too."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text[:120]!r}"
        for path in SHOWN_CODE
        for line, text in shown_constants(ast.parse(path.read_text(encoding="utf-8")))
        if INTERNAL.search(text)
    ]
    assert not found, "\n".join(found)


def test_the_scan_finds_a_seed_outside_docstrings_only():
    source = '''"""Module: seed 000."""
def f(n):
    """seed 001's figure."""
    # seed 002 in a comment
    x = "e.g. I am Matt (seed 004 sets it)"
    return f"seed {n}", x, "Discover_BERT.ipynb", "(a seed, from 1)"
'''
    found = [text for _, text in shown_constants(ast.parse(source)) if INTERNAL.search(text)]
    assert found == ["e.g. I am Matt (seed 004 sets it)", "seed 0", "Discover_BERT.ipynb"]


@pytest.mark.parametrize("callout", [callout for _, callout in CALLOUTS], ids=[name for name, _ in CALLOUTS])
def test_a_callouts_lead_fits_in_forty_words(callout):
    """And says more than its bold title: "**An NSP verdict is not a judgement of meaning.**" alone asks "why?"."""
    lead, _ = first_words(callout, CALLOUT_WORDS)
    assert lead and len(lead.split()) <= CALLOUT_WORDS, callout
    assert re.sub(r"^\*\*.*?\*\*", "", lead).strip(), lead


@pytest.mark.parametrize("name", OTHER_CALLOUTS)
def test_other_callouts_lead_in_forty_words(name):
    """Callouts outside the lessons: where to get the pre-training heads, the Fill-mask page's notes."""
    lead, _ = first_words(OTHER_CALLOUTS[name], CALLOUT_WORDS)
    assert lead and len(lead.split()) <= CALLOUT_WORDS, OTHER_CALLOUTS[name]


@pytest.mark.parametrize(("lesson", "index", "step"), STEPS, ids=IDS)
def test_a_steps_text_leads_in_forty_five_words(lesson, index, step):
    lead, _ = first_words(step.text, STEP_WORDS)
    assert lead and len(lead.split()) <= STEP_WORDS, (lesson.key, index + 1, step.text)
