"""The lessons in a real browser: each one walked from the home page to its last step, answering every
question; the model's answer shown is the one computed directly (``DirectLive``, itself compared with
reference computations in tests/core/test_lessons.py). On the bundled encoder the same walk shows which
head a question needs. The class link opens two independent browsers on the identical view.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from bertlens.curriculum import LESSONS
from bertlens.lessons import PAGE_HEADS, DirectLive, Lesson, needs_head
from bertlens.models import BUNDLED_MODEL
from bertlens.pages import PAGE_TITLES
from tests.browser.conftest import RUN_TIMEOUT_MS, SETTLED, open_tab, wait_for_layout, wait_for_run
from tests.browser.test_accessibility import SIDEWAYS
from tests.browser.test_projector import FOLD, WIDTH, assert_step_on_first_screen, within_the_screen


def main(page: Page):
    return page.locator('[data-testid="stMain"]')


def click(page: Page, name: str) -> None:
    main(page).get_by_role("button", name=name, exact=True).click()
    wait_for_run(page)


def answer(page: Page, choices: tuple[str, ...]) -> None:
    """The first choice, checked; or a word typed and sent with Enter (a form's text box sends it: a click on
    "Check my answer" after it would scroll to the button, now under the answered question)."""
    if choices:
        main(page).get_by_role("radiogroup", name="Your answer").get_by_text(choices[0], exact=True).click()
        wait_for_run(page)
        click(page, "Check my answer")
    else:
        box = main(page).get_by_role("textbox", name="Your answer (one word)")
        box.fill("paris")
        box.press("Enter")
        wait_for_run(page)


def walk(page: Page, base_url: str, lesson: Lesson, live: DirectLive, projector: bool = False) -> None:
    """Every step, answered; ``projector``: in presentation mode at 1280×720, as a teacher walks it in front of a
    class, with the step, its question, the control it names and the picture checked on the first screen."""
    if projector:
        page.set_viewport_size({"width": WIDTH, "height": FOLD})
    page.goto(base_url + ("/?present=true" if projector else ""))
    wait_for_run(page)
    click(page, f"Start the lesson “{lesson.title}”")
    for index, step in enumerate(lesson.steps):
        where = f"step {index + 1} of {len(lesson.steps)}"
        expect(main(page).get_by_text(where)).to_be_visible()
        expect(main(page).locator("h1")).to_have_text(PAGE_TITLES[step.page])
        expect(main(page).get_by_role("heading", name=step.title)).to_be_visible()
        reveal = step.question.reveal(live) if step.question else None
        asks = reveal is not None and reveal.answer is not None
        if projector:  # whatever Back and Next did before: the step is on the screen
            wait_for_layout(page)
            within_the_screen(page, main(page).get_by_role("heading", name=step.title), f"{where}: title")
            if asks:  # the page waits: the question takes the picture's place, large
                check = page.locator(".st-key-picture").get_by_role("button", name="Check my answer")
                within_the_screen(page, check, f"{where}: the question")
        alerts = main(page).locator('[data-testid="stAlert"]')
        waiting = main(page).get_by_text("Your answer first")
        if reveal is not None and reveal.answer is None:  # a missing head: said once, no question to answer
            expect(alerts.filter(has_text="needs a model with the")).to_have_count(1)
            expect(main(page).get_by_role("button", name="Check my answer")).to_have_count(0)
        elif step.question is not None and reveal is not None:
            expect(waiting).to_be_visible()  # the page, which shows the answer, waits for the student's
            if step.control:
                expect(page.locator(f".st-key-{step.control}")).to_have_count(0)
            answer(page, step.question.choices)
            verdict = alerts.filter(
                has_text="you said"
            )  # "Right — you said …, and so does the live computation" or "Not this time"
            expect(verdict).to_have_count(1)
            expect(verdict).to_contain_text(reveal.answer or "")
        expect(waiting).to_have_count(0)
        if projector:
            wait_for_run(page)
            wait_for_layout(page)
            if asks:  # answered: back in the step's column, the page in its place
                expect(page.locator(".st-key-lesson").get_by_role("button", name="Check my answer")).to_be_visible()
            assert_step_on_first_screen(page, lesson.key, index + 1, step.control)
        head = PAGE_HEADS.get(step.page)
        if step.control and not (head and needs_head(live.bundle, head)):  # the control it talks about, outlined
            target = page.locator(f".st-key-{step.control}").first
            if step.control.endswith("_tab"):
                target = target.locator('[role="tablist"]')
            expect(target).to_be_visible()
            expect(target).to_have_css("outline-style", "solid")
        if index < len(lesson.steps) - 1:
            click(page, "Next →")
    expect(main(page).get_by_role("button", name="Next →")).to_be_disabled()
    expect(main(page).get_by_text("Last step of this lesson")).to_be_visible()


@pytest.mark.parametrize("lesson", list(LESSONS.values()), ids=list(LESSONS))
def test_each_lesson_walks_to_its_last_step_on_a_projector(page, server_url, tiny_bundle, lesson):
    walk(page, server_url, lesson, DirectLive(tiny_bundle), projector=True)


def test_on_the_bundled_encoder_a_question_says_which_head_it_needs(page, bundled_url, bundled):
    """No MLM/NSP head: the overview lesson's fill-mask and next-sentence questions each say once what they need, with
    nothing to answer; a question the encoder can answer (the anatomy step's) gets the encoder's own answer. Each
    step opened by its link: every lesson is walked step by step on this encoder in AppTest
    (tests/pages/test_lessons_page.py) and in this browser on the tiny model above (the overview's whole walk here
    took ~55 s of CI's 15 minutes for no branch those do not reach)."""
    lesson, live = LESSONS["overview"], DirectLive(bundled)
    steps = [(n, s) for n, s in enumerate(lesson.steps, start=1) if s.question and s.page in PAGE_HEADS]
    answerable = next((n, s) for n, s in enumerate(lesson.steps, start=1) if s.question and s.page == "anatomy")
    assert steps and {s.page for _, s in steps} == set(PAGE_HEADS)
    for number, step in [*steps, answerable]:
        page.goto(f"{bundled_url}/{step.page}?lesson={lesson.key}&step={number}")
        wait_for_run(page)
        expect(main(page).get_by_role("heading", name=step.title)).to_be_visible()
        assert step.question is not None
        reveal = step.question.reveal(live)
        alerts = main(page).locator('[data-testid="stAlert"]')
        if step.page in PAGE_HEADS:
            assert reveal.answer is None
            expect(alerts.filter(has_text=f"needs a model with the {PAGE_HEADS[step.page]} head")).to_have_count(1)
            expect(main(page).get_by_role("button", name="Check my answer")).to_have_count(0)
        else:
            answer(page, step.question.choices)
            verdict = alerts.filter(has_text="you said")
            expect(verdict).to_have_count(1)
            expect(verdict).to_contain_text(reveal.answer or "")


ANIMAL = "The+animal+couldn%27t+cross+the+street+because+it+was+too+tired."
LAST_TINY_LAYER = 1  # the tiny pre-training model has encoder layers 0 and 1


SKIP = "Show the page without answering"


def settled_view(page: Page, title: str) -> str:
    """The main column's text once the step, its question and the live chart (mounted asynchronously) are
    drawn: the question skipped, as the teacher did."""
    expect(main(page).get_by_role("heading", name=title)).to_be_visible()
    expect(main(page).get_by_role("radiogroup", name="Your answer")).to_be_visible()
    waiting, words = main(page).get_by_text("Your answer first"), main(page).get_by_text("In words")
    expect(waiting.or_(words.first)).to_be_visible()  # the page waits for the answer, or is there
    if waiting.count():
        click(page, SKIP)
    expect(waiting).to_have_count(0)  # the skip's run is under way: wait_for_run can pass before it starts
    words = main(page).get_by_text("In words")  # one line of words under each chart, drawn with the page
    charts = main(page).locator(".js-plotly-plot")
    app = page.locator('[data-testid="stApp"]')
    wait_for_run(page)

    def read() -> tuple[str, int, int, str | None]:
        return main(page).inner_text(), words.count(), charts.count(), app.get_attribute("data-test-script-state")

    # Charts and elements keep mounting for a moment after the run (a second line of words was once drawn after
    # the first had been counted; a button of the panel was once missing from one of three reads), and a slow run
    # can rest between two charts: the view is settled once the run is over, every line of words has its chart
    # and two reads, a quarter of a second apart, agree.
    view, previous = read(), None
    for _ in range(RUN_TIMEOUT_MS // 250):
        if view == previous and view[1] == view[2] > 0 and view[3] == "notRunning":
            return view[0]
        page.wait_for_timeout(250)
        view, previous = read(), view
    raise AssertionError(f"the page did not settle: {title}")


def class_link(page: Page) -> str:
    """The class link as its view shows it: opened from the sidebar, read, closed (Escape)."""
    page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Show the class link").click()
    code = page.get_by_role("dialog").locator('[data-testid="stCode"] code')
    link = code.inner_text().strip()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    return link


def test_a_class_link_opens_two_browsers_on_the_identical_view(page, server_url, browser):
    lesson = LESSONS["discover"]
    page.goto(server_url)
    wait_for_run(page)
    click(page, f"Start the lesson “{lesson.title}”")
    for index, step in enumerate(lesson.steps[:3]):  # on to step 4: attention, token focus on "it", the last layer
        if step.question:  # the tiny model has both heads: every question's page waits
            click(page, SKIP)
        click(page, "Next →")
        expect(main(page).get_by_text(f"step {index + 2} of")).to_be_visible()  # its run may start after the wait
    click(page, SKIP)  # the teacher shows the page before the class has answered
    link = class_link(page)
    assert link.startswith(server_url + "/attention?") and "lesson=discover" in link and "step=4" in link
    assert f"attn_layer={LAST_TINY_LAYER}" in link
    slider = main(page).get_by_role("slider", name="Encoder layer")
    slider.focus()
    slider.press("Home")  # the teacher moves to encoder layer 0: the link follows
    wait_for_run(page)
    assert "attn_layer=" not in class_link(page)  # layer 0, the default, needs no parameter
    slider.focus()
    slider.press("End")
    wait_for_run(page)
    link = class_link(page)
    assert f"attn_layer={LAST_TINY_LAYER}" in link
    views = [settled_view(page, lesson.steps[3].title)]  # the teacher's own view
    for _ in range(2):  # two students: separate contexts (no shared cookies, storage or session)
        context = browser.new_context(viewport={"width": 1280, "height": 720})
        try:
            student = open_tab(context)
            student.goto(link)
            wait_for_run(student)
            views.append(settled_view(student, lesson.steps[3].title))
        finally:
            context.close()
    assert views[1] == views[0] and views[2] == views[0]
    assert (
        f"step 4 of {len(lesson.steps)}" in views[0] and "In words" in views[0]
    )  # the lesson step and the live chart's numbers


def test_a_lesson_step_fits_a_phone(browser, server_url):
    """At 390 px the panel's columns stack: no sideways scrolling, and Next and the question are reachable."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        phone = open_tab(context)
        phone.goto(f"{server_url}/attention?lesson=discover&step=4&text={ANIMAL}&attn_tab=Token+focus")
        wait_for_run(phone)
        phone.wait_for_function(SETTLED, timeout=RUN_TIMEOUT_MS)  # the final widths: a skeleton is not its widget
        assert phone.evaluate(SIDEWAYS) <= 0
        for name in ("Next →", "Check my answer"):
            button = main(phone).get_by_role("button", name=name)
            button.scroll_into_view_if_needed()
            expect(button).to_be_in_viewport()
        click(phone, SKIP)
        # The tab strip scrolls sideways on a phone: the step's tab is scrolled into it ("Toke›" before).
        tab = phone.get_by_role("tab", name="Token focus")
        expect(tab).to_have_attribute("aria-selected", "true")
        phone.wait_for_function(
            """() => { const t = [...document.querySelectorAll('[role=tab][aria-selected=true]')]
                  .find((e) => e.innerText.includes('Token focus'));
                const s = t.closest('[role=tablist]').getBoundingClientRect(), r = t.getBoundingClientRect();
                return r.left >= s.left && r.right <= s.right; }""",
            timeout=RUN_TIMEOUT_MS,
        )
    finally:
        context.close()


def test_a_pinned_link_moves_through_the_steps_and_back(page, server_url):
    """A class link pins the model (and a teacher's may turn presentation mode on): Next still opens each
    step's page, and both stay in the link. Back from the step that draws four heads together shows none
    selected, as the step's link and chart say (the browser once went on showing the four)."""
    page.goto(f"{server_url}/fill_mask?lesson=discover&step=3&present=true&model={BUNDLED_MODEL}")
    wait_for_run(page)
    click(page, "Next →")
    expect(main(page).locator("h1")).to_have_text("Attention")
    expect(main(page).get_by_text("step 4 of")).to_be_visible()
    assert "present=true" in page.url and f"model={BUNDLED_MODEL}" in page.url
    for step in (5, 6, 7):  # step 7: four heads drawn together
        click(page, "Next →")
        expect(main(page).get_by_text(f"step {step} of")).to_be_visible()
    chips = page.locator(".st-key-heads").get_by_role("button", name=re.compile(r"^Remove \d+$"))
    expect(chips).to_have_count(4)
    click(page, "← Back")
    expect(main(page).get_by_text("step 6 of")).to_be_visible()
    expect(chips).to_have_count(0)
    expect(main(page).get_by_text(re.compile(r"In words — Encoder layer \d+, head \d+:"))).to_be_visible()
    assert "heads=" not in page.url and "present=true" in page.url and f"model={BUNDLED_MODEL}" in page.url


def test_a_waiting_step_on_the_same_page_keeps_its_view(page, bundled_url):
    """Word senses 2 → 3 stays on the page, whose Preset box is bound to the URL. While the question waited the
    address lacked the step's view, and the page came back with the box on "field" beside apple's chart, and a
    link without ``preset`` that found no "apple" in the field sentences."""
    page.goto(f"{bundled_url}/senses?lesson=senses&step=2")
    wait_for_run(page)
    click(page, "Next →")
    expect(main(page).get_by_text("Your answer first")).to_be_visible()
    for part in ("preset=apple", "senses_tab=Separation+by+layer", "step=3"):
        assert part in page.url, (part, page.url)
    click(page, SKIP)
    expect(page.locator(".st-key-preset input")).to_have_value("apple")
    assert "preset=apple" in page.url


def test_back_walks_the_steps_each_on_its_own_page_and_sentence(page, server_url):
    """Back after a lesson's Next once showed the old page with the new step's address (a step's question above
    another step's sentence), and the session's latest sentence was written over every entry Back reached: nine
    presses never got back to step 1. Now each Next is one entry (a skipped question is one more: the student's
    own action), and Back and Forward show each step as it was."""
    steps = LESSONS["discover"].steps
    page.goto(f"{server_url}/attention?lesson=discover&step=6")
    wait_for_run(page)
    page.get_by_role("textbox", name="Sentence", exact=True).first.fill("The teacher's own sentence.")
    page.get_by_role("textbox", name="Sentence", exact=True).first.press("Enter")
    expect(page).to_have_url(re.compile(r"text=The\+teacher"))  # its run began: wait_for_run could pass before
    wait_for_run(page)
    click(page, "Next →")
    expect(page).to_have_url(re.compile(r"step=7\b"))  # two clicks before the first's run would be one Next
    wait_for_run(page)
    click(page, "Next →")
    expect(main(page).locator("h1")).to_have_text(PAGE_TITLES["senses"])
    chips = page.locator(".st-key-heads").get_by_role("button", name=re.compile(r"^Remove \d+$"))
    box = main(page).get_by_role("textbox", name="Sentence", exact=True)
    for number, sentence, heads in ((7, steps[6].params["text"], 4), (6, "The teacher's own sentence.", 0)):
        page.go_back()
        wait_for_run(page)
        expect(main(page).locator("h1")).to_have_text(PAGE_TITLES["attention"])
        expect(main(page).get_by_text(f"step {number} of")).to_be_visible()
        expect(box).to_have_value(sentence)
        expect(chips).to_have_count(heads)
        assert f"step={number}" in page.url and "bertlens_history" not in page.url
    page.go_back()  # the step as the link opened it
    wait_for_run(page)
    expect(box).to_have_value(steps[5].params["text"])
    page.go_forward()
    expect(box).to_have_value("The teacher's own sentence.")  # step 6 again, as the teacher left it
    wait_for_run(page)
    page.go_forward()
    wait_for_run(page)
    expect(main(page).get_by_text("step 7 of")).to_be_visible()
    expect(chips).to_have_count(4)


def test_a_class_link_keeps_what_it_says(page, server_url):
    """A link to a step whose own settings are all defaults looked bare: the page reopened the step's default
    view, dropping the teacher's change (PCA 3D), the sentence and presentation mode from the students' view."""
    page.goto(f"{server_url}/senses?lesson=discover&step=8&projection=PCA+3D&present=true")
    wait_for_run(page)
    expect(main(page).get_by_text("step 8 of")).to_be_visible()
    expect(page.locator(".st-key-projection").get_by_role("radio", name="PCA 3D")).to_be_checked()
    assert "projection=PCA+3D" in page.url and "present=true" in page.url
    page.goto(f"{server_url}/attention?lesson=discover&step=6&present=true")  # bare: the step's view, still presenting
    wait_for_run(page)
    expect(main(page).get_by_text("step 6 of")).to_be_visible()
    assert "attn_tab=Head+view" in page.url and "present=true" in page.url


@pytest.mark.new_tab  # counts the tab's history, which a browser caps at 50 entries
def test_answering_or_skipping_a_question_adds_no_history_entry(page, server_url):
    """Back could not undo an answer or a skip (they live in the session), so each cost the student a Back press
    that changed nothing; a bare lesson link's rewrite of the address adds none either."""
    page.goto(f"{server_url}/fill_mask?lesson=discover&step=2")
    wait_for_run(page)
    expect(main(page).get_by_text("Your answer first")).to_be_visible()
    expect(page).to_have_url(re.compile(r"[?&]text="))  # the bare link's rewrite into the step's view is done
    length = page.evaluate("history.length")
    click(page, SKIP)
    expect(main(page).get_by_text("Your answer first")).to_have_count(0)
    click(page, "Next →")
    expect(main(page).get_by_text("step 3 of")).to_be_visible()  # the click's run may start after wait_for_run
    answer(page, ())
    expect(main(page).get_by_text("you said")).to_be_visible()
    assert page.evaluate("history.length") == length + 1  # Next only
    page.go_back()
    wait_for_run(page)
    expect(main(page).get_by_text("step 2 of")).to_be_visible()


def test_a_reload_keeps_the_answers_and_a_new_tab_asks_again(page, server_url, browser_context):
    """A reload opens a new session (the connection back after a blip reloads the page by itself): the lesson's
    questions were asked again, and their pages waited again, although the student had answered. A new tab (the
    link opened again, the next class on the projector) still asks first: the answer would be given away."""
    link = f"{server_url}/fill_mask?lesson=discover&step=2"
    page.goto(link)
    wait_for_run(page)
    answer(page, ())
    expect(main(page).get_by_text("you said “paris”")).to_be_visible()
    page.wait_for_function("sessionStorage.getItem('bertlens_answers')")  # kept once its script's code is in
    page.reload()
    wait_for_run(page)
    expect(main(page).get_by_text("you said “paris”")).to_be_visible()
    expect(main(page).get_by_text("Your answer first")).to_have_count(0)
    expect(main(page).get_by_role("textbox", name="Your answer (one word)")).to_have_value("paris")
    page.wait_for_function("window.bertlensAnswers")  # the reloaded page's script is in
    assert "bertlens_answers" not in page.evaluate("document.cookie")  # handed over, then removed
    other = browser_context.new_page()
    try:
        other.goto(link)
        wait_for_run(other)
        expect(main(other).get_by_text("Your answer first")).to_be_visible()
    finally:
        other.close()


def test_a_bare_lesson_links_bad_class_setting_is_still_reported(open_url):
    """A bare lesson link opened on its step's page reruns into the step's view; the run that warned about the
    link's bad value was replaced, so the class silently got the default (a hosted-mode audit)."""
    page = open_url("attention", lesson="discover", step="4", present="yes")
    expect(page).to_have_url(re.compile(r"attn_tab=Token"))  # the step's view opened
    alert = page.locator('[data-testid="stAlert"]', has_text="The link's present parameter (yes)")
    expect(alert).to_have_count(1)


def in_view(page: Page, selector: str) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


def focused_in(page: Page, selector: str) -> str:
    """The focused element's role or tag, when it is inside ``selector``; '' when focus is elsewhere."""
    return page.evaluate(
        """selector => { const el = document.activeElement;
        return document.querySelector(selector)?.contains(el) ? (el.getAttribute("role") || el.tagName) : ""; }""",
        selector,
    )


def go_to_it(page: Page, selector: str) -> None:
    """Press the button and wait until focus is in ``selector`` and it is in view (its script retries every 150 ms
    while the control is still a placeholder)."""
    page.wait_for_function("window.bertlensJump === true")  # its script runs just after the button is drawn
    main(page).get_by_role("button", name="Go to it ↓").press("Enter")
    wait_for_run(page)
    page.wait_for_function("s => document.querySelector(s)?.contains(document.activeElement)", arg=selector)
    expect(page.locator(selector).first).to_be_in_viewport()


def open_step(page: Page, url: str, view: str, asks: bool) -> None:
    """A bare step link: it opens the step's view (one more run), then a question step waits for a skip."""
    page.goto(url)
    expect(page).to_have_url(re.compile(f"{view}="))
    if asks:
        click(page, SKIP)
    wait_for_run(page)


def test_go_to_it_brings_the_outlined_control_into_view_with_focus(page, server_url):
    """The control a step talks about was below the first screen in 29 of 34 steps at 1280×720 when the lessons had
    34 (the step's text sits above the page; in presentation mode, all 34): its button scrolls it into view and
    focuses the part a student operates: a select's box, not its help icon; a tab strip's open tab, not its content."""
    page.set_viewport_size({"width": 1280, "height": 720})
    open_step(page, f"{server_url}/attention?lesson=patterns&step=2", "stat", asks=True)
    assert page.locator(".st-key-stat").bounding_box()["y"] > 720  # below the first screen: the case it is for
    go_to_it(page, ".st-key-stat")
    assert in_view(page, ".st-key-stat") and focused_in(page, ".st-key-stat") in ("combobox", "INPUT")
    open_step(page, f"{server_url}/senses?lesson=senses&step=1", "senses_layer", asks=False)  # a help icon first
    go_to_it(page, ".st-key-senses_layer")
    assert focused_in(page, ".st-key-senses_layer") in ("combobox", "INPUT")  # not the help icon (a BUTTON)
    open_step(page, f"{server_url}/anatomy?lesson=overview&step=5", "anatomy_tab", asks=True)
    strip = '.st-key-anatomy_tab [role="tablist"]'
    go_to_it(page, strip)  # tabs: the strip, not the open tab's long content
    assert in_view(page, strip) and focused_in(page, strip) == "tab"


def test_go_to_it_opens_the_steps_tab_when_the_student_has_left_it(page, server_url):
    """The review: on another tab the control is not drawn at all, and the button did nothing."""
    open_step(page, f"{server_url}/attention?lesson=patterns&step=6", "stat", asks=False)
    page.locator('.st-key-attn_tab [role="tab"]', has_text="Heatmap").click()
    wait_for_run(page)
    expect(page.locator(".st-key-stat")).to_have_count(0)
    go_to_it(page, ".st-key-stat")
    expect(page.locator(".st-key-stat")).to_be_visible()
    assert in_view(page, ".st-key-stat")


def test_a_lesson_follows_a_sidebar_click_to_another_page(page, server_url):
    """The sidebar's page links dropped ``lesson`` and ``step`` with the rest of the address: the panel vanished."""
    page.goto(f"{server_url}/tokenizer?lesson=discover&step=1")
    wait_for_run(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Model anatomy").click()
    wait_for_run(page)
    expect(main(page).locator("h1")).to_have_text("Model anatomy")
    expect(main(page).get_by_text("step 1 of")).to_be_visible()
    assert "lesson=discover" in page.url and "step=1" in page.url
    click(page, f"Open the {PAGE_TITLES['tokenizer']} page for this step")
    expect(main(page).locator("h1")).to_have_text(PAGE_TITLES["tokenizer"])


# Until the main column has not scrolled for half a second (a smooth scroll takes a few hundred ms).
SCROLL_STILL = """() => { const main = document.querySelector('[data-testid="stMain"]'), now = performance.now();
  if (window.bertlensTestTop !== main.scrollTop) { window.bertlensTestTop = main.scrollTop; window.bertlensTestSince = now; }
  return now - window.bertlensTestSince > 500; }"""


def on_screen(page: Page, locator) -> bool:
    """Whole on the screen, below Streamlit's header bar."""
    box, header = locator.bounding_box(), page.locator('[data-testid="stHeader"]').bounding_box()
    top = header["y"] + header["height"] if header else 0
    return box is not None and box["y"] >= top and box["y"] + box["height"] <= page.viewport_size["height"]


def step_is_on_screen(page: Page, title: str) -> None:
    wait_for_layout(page)
    page.wait_for_function(SCROLL_STILL)
    for part in (
        main(page).get_by_role("heading", name=title, level=2),
        main(page).get_by_role("button", name="← Back"),
        main(page).get_by_role("button", name="Next →"),
    ):
        assert on_screen(page, part), (title, part, part.bounding_box())


@pytest.mark.parametrize("present", [True, False], ids=["presenting", "not-presenting"])
def test_back_and_next_leave_the_steps_title_and_buttons_on_screen(page, server_url, present):
    """At 1280×720, Next from "Every layer and head at once" (the All heads tab) to the step on the Head view tab
    scrolled the page by ~455 px (650 in presentation mode): Streamlit scrolls a tab strip's newly opened tab into
    view, page and all, and the strip was below the screen. The new step's title and its Back and Next were gone
    above it. By mouse and by keyboard (Back, from that step's Head view to All heads)."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{server_url}/attention?lesson=discover&step=9" + ("&present=true" if present else ""))
    wait_for_run(page)
    click(page, "Next →")
    expect(main(page).get_by_text("step 10 of")).to_be_visible()
    step_is_on_screen(page, LESSONS["discover"].steps[9].title)
    main(page).get_by_role("button", name="← Back").press("Enter")
    wait_for_run(page)
    expect(main(page).get_by_text("step 9 of")).to_be_visible()
    step_is_on_screen(page, LESSONS["discover"].steps[8].title)
