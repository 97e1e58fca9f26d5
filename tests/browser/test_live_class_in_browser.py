"""A live class in a real browser: one teacher and two students, each in their own browser context (their own
cookies), on a server with its own room store (a SQLite file of the test's). The teacher starts a class from the
home page, the students join by the link and by the typed code, follow the teacher's Next, answer the fill-mask
question; the teacher's count goes up without a click, the reveal reaches every page, reloads keep each one's
role and answer, and axe finds nothing on the join view nor on a student's revealed answers. In a Word senses round
both students send a sentence, the teacher's map and list take them live, and a sentence the teacher hides leaves
the projector and a student's map (axe finds nothing on that student's page).
(tests/pages/test_live_class.py checks the numbers against the model in AppTest.)
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from bertlens.curriculum import LESSONS
from bertlens.rooms import CODE_LENGTH, LIMITS
from components.services.rooms import open_store
from components.state.classroom import HOST_COOKIE
from components.state.history import NO_HISTORY_ENTRY
from components.ui.classroom import JOIN_LABEL
from tests.browser.conftest import REQUIRED, RUN_TIMEOUT_MS, SETTLED, open_tab, wait_for_run
from tests.browser.test_accessibility import AXE_JS, CHROME, RUN_AXE
from tests.browser.test_lessons_in_browser import click, main
from tests.browser.test_projector import keep
from tests.live_server import streamlit_server

DISCOVER = LESSONS["discover"]
ASKS = DISCOVER.steps[1]  # "Predict the hidden word", on the fill-mask page: a typed word
FOLLOW_MS = 8_000  # a student's page looks for the teacher's step every 2 s; then one run of the page
COUNT_MS = 4_000  # the teacher's count is read every second
WORDS = ("dog", "cat")
# Streamlit's layer of tooltips, outside every landmark (axe: region). A student who sent the answer with Enter has
# keyboard focus; when the reveal takes the answer box away within a few seconds (as here), focus goes to the
# control nearest it (components/ui/focus.py), ← Back, whose help shows there. Streamlit's markup, like CHROME's.
TOOLTIPS = "#stFloatingOverlayPortal"


@pytest.fixture(scope="module")
def rooms_file(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rooms") / "rooms.sqlite3"


@pytest.fixture(scope="module")
def class_url(tiny_pretraining_dir, rooms_file, tmp_path_factory) -> Iterator[str]:
    """A server of its own, whose room store is the test's file (not the user's ~/.cache one)."""
    log = tmp_path_factory.mktemp("live-class") / "server.log"
    with streamlit_server(tiny_pretraining_dir, log, BERTLENS_CLASS_STORE=f"sqlite:///{rooms_file}") as url:
        yield url


@pytest.fixture
def contexts(browser: Browser) -> Iterator[list[BrowserContext]]:
    """The teacher's and two students' browsers: separate contexts, so separate cookies and sessions."""
    made = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(3)]
    yield made
    for context in made:
        context.close()


def axe_clean(page: Page, where: str) -> None:
    if not AXE_JS.exists():
        assert not REQUIRED, f"BERTLENS_REQUIRE_BROWSER=1 but axe-core is not at {AXE_JS}"
        return  # the class is still checked (test_accessibility.py skips, and says how to install axe)
    page.wait_for_function(SETTLED, timeout=RUN_TIMEOUT_MS)
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(content=AXE_JS.read_text())
    own = [node for node in page.evaluate(RUN_AXE, [*CHROME, TOOLTIPS]) if not node["chrome"]]
    assert not own, f"{len(own)} axe violations on {where}:\n" + "\n".join(
        f"  {node['rule']} ({node['impact']}) at {node['target']}: {node['summary']} | {node['html']}" for node in own
    )


def class_words(page: Page):
    """The "In words" captions of the question's answers (the class's words, BERT's guesses), not the page's own."""
    return page.locator(f".st-key-{NO_HISTORY_ENTRY}").get_by_text(re.compile("^In words — "))


def on_step(page: Page, number: int) -> None:
    """The page shows the discover lesson's step ``number``."""
    step = DISCOVER.steps[number - 1]
    expect(main(page).get_by_text(f"step {number} of {len(DISCOVER.steps)}")).to_be_visible(timeout=FOLLOW_MS)
    expect(main(page).get_by_role("heading", name=step.title)).to_be_visible(timeout=FOLLOW_MS)


def test_a_teacher_and_two_students_answer_reveal_and_reload(contexts, class_url, rooms_file):
    teacher, first, second = (open_tab(context) for context in contexts)

    # 1. The teacher starts a class on "Discover BERT" from home: the join view opens.
    teacher.goto(class_url)
    wait_for_run(teacher)
    main(teacher).get_by_role("combobox", name=re.compile("^Lesson")).click()
    teacher.get_by_role("option", name=DISCOVER.title).click()
    wait_for_run(teacher)
    click(teacher, "Start a live class")
    dialog = teacher.get_by_role("dialog")
    expect(dialog.get_by_role("img", name=JOIN_LABEL)).to_be_visible()
    spaced = dialog.locator(".bl-code").inner_text()
    code = spaced.replace(" ", "")
    assert len(code) == CODE_LENGTH, spaced
    link = dialog.locator(".bl-link").inner_text()
    assert link == f"{class_url}/?room={code}"
    teacher.wait_for_function(f"() => document.cookie.includes('{HOST_COOKIE}=')")  # set by the page's script
    cookie = {c["name"]: c["value"] for c in contexts[0].cookies()}.get(HOST_COOKIE, "")
    assert cookie.startswith(f"{code}."), "the host key is kept in this browser's cookie"
    secret = cookie.split(".", 1)[1]
    assert len(secret) >= 40 and secret not in teacher.url and HOST_COOKIE not in teacher.url
    assert secret not in teacher.locator("body").inner_text()  # nothing on the projector shows it
    on_step(teacher, 1)
    keep(teacher, "live-class-join-view")
    axe_clean(teacher, "the teacher's join view")
    teacher.keyboard.press("Escape")
    expect(dialog).to_have_count(0)

    # 2. A student opens the link, another types the code (lower case, a dash): both on the class's step.
    first.goto(link)
    wait_for_run(first)
    second.goto(class_url)
    wait_for_run(second)
    main(second).get_by_role("textbox", name="Room code").fill(f"{code[:3]}-{code[3:]}".lower())
    click(second, "Join the class")
    for student in (first, second):
        on_step(student, 1)
        expect(main(student).get_by_text("following the teacher")).to_be_visible()
        assert f"room={code}" in student.url and "seat=" in student.url and secret not in student.url
        assert HOST_COOKIE not in {c["name"] for c in student.context.cookies()}
    store = open_store(f"sqlite:///{rooms_file}", LIMITS)
    assert store.room(code, time.time()).students == 2

    # 3. The teacher's Next: both students' pages follow, without a click.
    click(teacher, "Next →")
    on_step(teacher, 2)
    for student in (first, second):
        on_step(student, 2)
        expect(main(student).get_by_text(ASKS.question.prompt if ASKS.question else "?")).to_be_visible()
        expect(main(student).get_by_text("Your answer first")).to_be_visible()

    # 4. Each sends a word; the teacher's count goes to 2 of 2 by itself.
    count = main(teacher).locator('[data-testid="stMetric"]').filter(has_text="Answers in")
    expect(count.locator('[data-testid="stMetricValue"]')).to_have_text("0 of 2", timeout=COUNT_MS)
    for student, word in zip((first, second), WORDS):
        box = main(student).get_by_role("textbox", name="Your answer (one word)")
        box.fill(word)
        box.press("Enter")
        wait_for_run(student)
        expect(main(student).get_by_text("Your answer is in")).to_be_visible()
    expect(count.locator('[data-testid="stMetricValue"]')).to_have_text("2 of 2", timeout=COUNT_MS)

    # 5. The reveal: the class's words and BERT's guesses on every page, each student's verdict on theirs.
    click(teacher, "Reveal the answers")
    in_words = class_words(teacher)
    expect(in_words).to_have_count(2)
    expect(in_words.first).to_have_text("In words — cat: 1, dog: 1")  # ties in code-point order
    bert = in_words.nth(1).inner_text()
    expect(main(teacher).get_by_text("Computed live, BERT's answer is")).to_be_visible()
    for student, word in zip((first, second), WORDS):
        words = class_words(student)
        expect(words).to_have_count(2, timeout=FOLLOW_MS)
        expect(words.first).to_have_text("In words — cat: 1, dog: 1")
        expect(words.nth(1)).to_have_text(bert)
        expect(main(student).locator('[data-testid="stAlert"]').filter(has_text=f"you said “{word}”")).to_be_visible()
    keep(first, "live-class-revealed")
    axe_clean(first, "a student's page after the reveal")

    # 6. Reloads: the teacher still leads (the cookie), a student keeps their seat and answer, no new student.
    first.reload()
    wait_for_run(first)
    on_step(first, 2)
    expect(main(first).locator('[data-testid="stAlert"]').filter(has_text=f"you said “{WORDS[0]}”")).to_be_visible()
    teacher.reload()
    wait_for_run(teacher)
    on_step(teacher, 2)
    expect(main(teacher).get_by_text("you lead it")).to_be_visible()
    expect(main(teacher).get_by_text(f"Live class {code} · 2 students")).to_be_visible()
    expect(main(teacher).get_by_role("button", name="End the class")).to_be_visible()
    assert store.room(code, time.time()).students == 2


SENSES = LESSONS["senses"]
ROUND_STEP = next(number for number, step in enumerate(SENSES.steps, start=1) if step.class_sentences)
SENTENCES = ("I ate a crisp apple for lunch.", "My new apple phone will not start.")


def class_map_points(page: Page):
    """The rows of the class map's table of coordinates (its text equivalent) that are the class's sentences."""
    table = main(page).get_by_role("region", name=re.compile("^senses class apple coordinates"))
    return table.locator("tbody tr").filter(has_text=re.compile("the class|your sentence"))


def test_a_word_senses_round_maps_the_class_and_the_teacher_hides_a_sentence(contexts, class_url, rooms_file):
    """The room is opened at the round's step through the store, and the teacher's browser holds its host key as
    the cookie *Start a live class* sets (the test above starts a class by its button)."""
    store = open_store(f"sqlite:///{rooms_file}", LIMITS)
    room, secret = store.open_room("senses", ROUND_STEP, time.time())
    contexts[0].add_cookies([{"name": HOST_COOKIE, "value": f"{room.code}.{secret}", "url": class_url}])
    teacher, first, second = (open_tab(context) for context in contexts)
    teacher.goto(f"{class_url}/senses?lesson=senses&step={ROUND_STEP}&room={room.code}")
    wait_for_run(teacher)
    expect(main(teacher).get_by_text("you lead it")).to_be_visible()
    expect(main(teacher).get_by_text("No sentences yet")).to_be_visible()

    # 1. Both students join by the link, land on the round's step and send a sentence each.
    for student, sentence in zip((first, second), SENTENCES):
        student.goto(f"{class_url}/?room={room.code}")
        wait_for_run(student)
        expect(main(student).get_by_role("heading", name=SENSES.steps[ROUND_STEP - 1].title)).to_be_visible(
            timeout=FOLLOW_MS
        )
        box = main(student).get_by_role("textbox", name="Your sentence with “apple”")
        box.fill(sentence)
        box.press("Enter")
        wait_for_run(student)
        expect(main(student).get_by_text("Your sentence is in")).to_be_visible()
    assert not main(first).get_by_role("button", name=re.compile("^Hide ")).count()  # no toggle for a student

    # 2. The teacher's map takes both by itself (no click), and the list shows each sentence as typed.
    expect(class_map_points(teacher)).to_have_count(2, timeout=FOLLOW_MS)
    for number, sentence in enumerate(SENTENCES, start=1):
        expect(main(teacher).get_by_text(f"{number}. {sentence}", exact=True)).to_be_visible()
    keep(teacher, "live-class-senses-round")

    # 3. The teacher hides the first: off the projector's list and map, and off a student's map within a refresh.
    click(teacher, "Hide 1")
    expect(main(teacher).get_by_text("1. (hidden from the map)", exact=True)).to_be_visible()
    expect(class_map_points(teacher)).to_have_count(1, timeout=FOLLOW_MS)
    expect(main(teacher).get_by_text(SENTENCES[0])).to_have_count(0)
    points = class_map_points(second)
    expect(points).to_have_count(1, timeout=FOLLOW_MS)
    expect(points).to_contain_text(SENTENCES[1])
    expect(main(first).get_by_text("the teacher has hidden it")).to_be_visible(timeout=FOLLOW_MS)
    assert [e.sentence for e in store.sentences(room.code, f"_lesson_senses_{ROUND_STEP - 1}", time.time())] == [
        SENTENCES[1]
    ]
    axe_clean(second, "a student's Word senses round")
