"""Bad input through the new tabs (Step by step, Compare, Mask and see, Layer by layer, Compare two
sentences): no exception, and markup typed by the user is never rendered live."""

import pytest

from tests.pages.test_bad_inputs import BAD_STRINGS, MARKUP, literal_problems, type_into

NEW_TABS = [
    ("pages/attention.py", {"tab": "Step by step"}, [("text_input", "text")]),
    ("pages/attention.py", {"tab": "Compare"}, [("text_input", "compare")]),
    ("pages/attention.py", {"tab": "Mask and see"}, [("text_input", "text")]),
    ("pages/fill_mask.py", {"fill_tab": "Layer by layer", "true_word": "paris"}, [("text_input", "text")]),
    (
        "pages/fill_mask.py",
        {"fill_tab": "Compare two sentences", "text": "a [MASK] b"},
        [("text_input", "fill_compare")],
    ),
]


@pytest.mark.parametrize("page, params, inputs", NEW_TABS, ids=[f"{p[0]}-{list(p[1].values())[0]}" for p in NEW_TABS])
def test_every_bad_string_on_the_new_tabs(open_page, tiny_pretraining_dir, page, params, inputs):
    at = open_page(page, tiny_pretraining_dir, **params)
    assert not at.exception, at.exception
    failures = []
    for name, text in BAD_STRINGS.items():
        type_into(at, inputs, text)
        if at.exception:
            failures.append(f"{name}: {at.exception[0].message}")
        elif name in MARKUP:
            failures += [f"{name}: {problem}" for problem in literal_problems(at, text)]
    assert not failures, "\n".join(failures)
