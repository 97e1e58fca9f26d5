"""The lesson panel and the lesson list (the class link: ``components.ui.class_link``).

The panel sits in the main column, not in the sidebar: a step's text points at a control of the page and should
be read next to it. Reading, it is above the live page; presenting, a column beside the page's controls and
picture (``components.ui.layout.Stage``), all on a projector's first screen. Progress lives in the URL
(``lesson``, ``step``), so a link resumes it.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.errors import StreamlitAPIException

from bertlens.curriculum import LESSONS, lesson_step
from bertlens.family import in_model_tokens
from bertlens.lessons import (
    GET_THE_HEADS,
    PAGE_HEADS,
    Lesson,
    Question,
    Step,
    heads_needed,
    needs_head,
    resolve,
    why_not_asked,
)
from bertlens.mlm import with_mask_token
from bertlens.models import ModelBundle
from bertlens.pages import PAGE_TITLES
from bertlens.rooms import LIMITS, Room, RoomError, answer_form
from bertlens.wording import first_words
from components.services.classroom import room_store
from components.services.live import CachedLive
from components.services.text import literal
from components.state.answers import (
    MAX_ANSWER_CHARS,
    answer_key,
    guess_key,
    keep_answers,
    question_key,
    restore_answers,
    skipped_key,
)
from components.state.classroom import (
    MEMBER,
    Membership,
    in_a_class,
    keep_host_key,
    leave_class,
    membership,
    this_client,
)
from components.state.history import NO_HISTORY_ENTRY
from components.state.model_choice import active_bundle, second_model_choice
from components.state.params import (
    PARAMS,
    declared,
    forget_page_state,
    presenting,
    release_bound,
    session_value,
    warn_bad_param,
)
from components.state.widgets import SHARED_TEXTS, forget_shared_text, int_in_range, set_shared_text
from components.ui.classroom import (
    answer_count,
    class_answers,
    class_bar,
    forget_host_key,
    join_url,
    join_view,
    show_join_view,
    start_class,
    watch_room,
)

STEP_WORDS = 45  # a step's text shown at once; the rest is one click away ("More")
CALLOUT_WORDS = 40  # a callout's
# The class's, not a step's view: every step keeps them (a live class's room and this tab's seat too).
CLASS_SETTINGS = ("model", "custom_model", "present", "room", "seat")
PENDING = "_lesson_pending"  # (page, {"lesson", "step"}) of the step being opened
OPENED = "_lesson_opened"  # (lesson, step index) last opened with its view in this session
FOLLOWED = "_lesson_followed"  # {"lesson", "step"} of the step shown last: shared, so a page switch keeps them
SEEN = "_class_seen"  # (lesson, step) of the live class's room, as this session last read it
JOINED = "_class_joined"  # the room this session has counted its student in
TAKEN_IN_BOX = "_class_answer_taken"  # a class answer was just taken: the box's own rerun keeps it in the tab


@dataclass(frozen=True)
class InClass:
    """This run's live class: this tab's membership and the room as read at the run's start."""

    member: Membership
    room: Room


def step_url_params(lesson: Lesson, index: int, num_layers: int) -> dict[str, str | list[str]]:
    """Every URL parameter of step ``index``: its page's view and the progress."""
    params: dict[str, str | list[str]] = {"b": "", **resolve(lesson.steps[index].params, num_layers)}
    params.update(lesson=lesson.key, step=str(index + 1))
    return {name: value for name, value in params.items() if value != ""}


def go_to_step(lesson: Lesson, index: int, num_layers: int) -> None:
    """Open step ``index``: its page with its view (the session's own values of its controls give way).

    The controls get the step's values through session state, and the URL gets the whole view at once, also on
    the same page, where its widgets are bound to their parameters: the link is right even while the page waits
    for the step's question. (``st.switch_page`` to another page leaves one more history entry: the old page
    with the new query string, so the browser's Back lands there first. Streamlit's own, left alone.)
    """
    step = lesson.steps[index]
    steer_the_class(lesson, index)
    params = step_url_params(lesson, index, num_layers)
    params.update({name: st.query_params[name] for name in CLASS_SETTINGS if name in st.query_params})
    for name in SHARED_TEXTS:
        if name in step.params or name == "b":  # a step without sentence B clears it
            set_shared_text(str(params.get(name, "")), name)
    if step.page == "senses" and "text" not in step.params:
        forget_shared_text()  # the student's own sentence would add points to the step's map
    forget_page_state(step.page, keep=set(step.params))  # the step's view: what it does not set is the default
    for name in step.params:
        if name not in SHARED_TEXTS:
            st.session_state[name] = session_value(declared(name), params[name])
    st.session_state[PENDING] = (step.page, {"lesson": lesson.key, "step": str(index + 1)})
    st.session_state[OPENED] = (lesson.key, index)
    release_bound(params)
    try:
        st.switch_page(f"pages/{step.page}.py", query_params=params)
    except StreamlitAPIException:  # the page runs on its own, outside app.py's navigation (AppTest.from_file)
        st.query_params.from_dict(params)
        st.rerun()


def steer_the_class(lesson: Lesson, index: int) -> None:
    """The teacher of a live class opens a step: the room's step too, so every student's page follows."""
    member: Membership | None = st.session_state.get(MEMBER)
    if member is not None and member.hosting:
        try:
            room_store().steer(member.code, member.secret, lesson.key, index + 1, time.time())
        except RoomError as error:
            st.warning(literal(str(error)), icon=":material/group_off:")


def start_class_button(bundle: ModelBundle, key: str, lesson: Lesson | None = None) -> None:
    """Start a live class, this tab its host: at ``lesson``'s first step, else the lesson step open here, else the
    first lesson's first step. Not drawn in a class."""
    if in_a_class():
        return
    # The address's step read as it is (the page's panel says what is wrong with it: not this sidebar button too).
    found = (lesson, 0) if lesson else lesson_step(st.query_params.get("lesson"), st.query_params.get("step"))
    chosen, index = found or (next(iter(LESSONS.values())), 0)
    if st.button(
        "Start a live class",
        icon=":material/groups:",
        key=key,
        help="Students join with a code or a QR code; their pages follow your steps and their answers come to you",
    ) and start_class(chosen.key, index + 1):
        go_to_step(chosen, index, bundle.capabilities.num_layers)


def follow_the_class(bundle: ModelBundle, page: str) -> InClass | None:
    """The live class this tab is in, read once a run: a student's page goes to the teacher's step when it changes
    (unless the student looks around elsewhere: then "Back to the class"); the class bar above the page."""
    member = membership()
    if member is None:
        return None
    store, now = room_store(), time.time()
    try:
        if not member.hosting and st.session_state.get(JOINED) != member.code:
            store.find_room(member.code, this_client(), now, by_link=True)  # a link's code is a guess too
            room = store.join(member.code, member.seat, now)
            st.session_state[JOINED] = member.code
        else:
            room = store.room(member.code, now)
    except RoomError as error:
        st.warning(literal(str(error)), icon=":material/group_off:")
        leave_class()
        return None
    keep_host_key(member)
    layers = bundle.capabilities.num_layers
    shown = lesson_step(st.query_params.get("lesson"), st.query_params.get("step"))
    if member.hosting and shown and (shown[0].key, shown[1] + 1) != (room.lesson, room.step):
        steer_the_class(*shown)  # the teacher's Back/Forward, or a lesson link: the class goes there too
        room = replace(room, lesson=shown[0].key, step=shown[1] + 1)
    lesson = LESSONS.get(room.lesson)
    if lesson is not None and not 0 < room.step <= len(lesson.steps):
        lesson = None  # a step this version's lesson lacks: nowhere to follow
    here = (st.query_params.get("lesson"), st.query_params.get("step"), page)
    theirs = (room.lesson, str(room.step), lesson.steps[room.step - 1].page if lesson else None)
    seen = st.session_state.get(SEEN)
    st.session_state[SEEN] = theirs
    following = seen is None or here == seen  # where the class was: not looking around elsewhere
    if lesson is not None and not member.hosting and here != theirs and seen != theirs and following:
        go_to_step(lesson, room.step - 1, layers)
    action = class_bar(member, room, away=here != theirs)
    if action == "back" and lesson is not None:
        go_to_step(lesson, room.step - 1, layers)
    elif action == "join view":
        join_view(member.code, join_url(member.code))
    elif action in ("end", "leave"):
        try:
            if action == "end":
                store.close(member.code, member.secret, now)
        except RoomError as error:  # ended meanwhile (another tab of the teacher's), or past its time
            st.warning(literal(str(error)), icon=":material/group_off:")
        leave_class()
        if action == "leave":
            st.rerun()
        forget_host_key()  # the page runs on, out of the class (a rerun would not send the script)
        return None
    show_join_view(member)
    if not member.hosting:
        watch_room(member.code, room)
    return InClass(member, room)


def forget_opened_step() -> None:
    """Let a bare lesson link open its step's view again (Back to the entry of a bare link showed the step's
    question above the page's default view)."""
    st.session_state.pop(OPENED, None)


def keep_followed_lesson() -> None:
    """Put the lesson the student follows back in the address after a sidebar page switch, which drops every
    parameter: like the sentence, the lesson follows the student from page to page (the panel then offers the
    step's own page). Not after Back or Forward (the entry's address is the view), nor once the lesson is left."""
    if (followed := st.session_state.get(FOLLOWED)) and "lesson" not in st.query_params:
        st.query_params.update(followed)


def close_lesson() -> None:
    """No lesson any more: out of the address, and no longer followed to other pages."""
    for name in ("lesson", "step"):
        st.query_params.pop(name, None)
    st.session_state.pop(FOLLOWED, None)


def apply_pending(page: str) -> None:
    """Put the opened step's progress in the URL on its page (``st.switch_page`` carries it too, but a page
    run on its own cannot switch, and a rerun can start from the old query string)."""
    pending = st.session_state.pop(PENDING, None)
    if pending and pending[0] == page:
        st.query_params.update(pending[1])


def linked_step(page: str) -> tuple[Lesson, int] | None:
    """The lesson step the address names on ``page`` (the step just opened included), or None."""
    apply_pending(page)
    return _linked_step()


def lesson_panel(
    bundle: ModelBundle, page: str, found: tuple[Lesson, int], stage: DeltaGenerator, in_class: InClass | None = None
) -> bool:
    """Lesson step ``found``: a line with the lesson, the progress and Back/Next, then the step's title, text and
    callouts and its question. A bare link (lesson and step only) opens the step's view, once. Presenting, a
    question the page waits for takes the ``stage`` (the picture's place, empty meanwhile): large, for the class.

    True while the page should wait: the step is on this page and its question is neither answered nor
    skipped. The page would show the model's answer below the question ("predict first", then reveal)."""
    lesson, index = found
    restore_answers()
    step, layers = lesson.steps[index], bundle.capabilities.num_layers
    if step.page == page and st.session_state.get(OPENED) != (lesson.key, index):
        st.session_state[OPENED] = (lesson.key, index)
        if step.params and set(st.query_params) <= {"lesson", "step", *CLASS_SETTINGS}:  # a bare link
            go_to_step(lesson, index, layers)  # the step's own view, not whatever the page showed
            # (A link with any view parameter is the view it shows: the step's values it leaves out are defaults.)
    with st.container(border=True):
        _step_navigation(lesson, index, layers)
        waits = _step_body(bundle, page, lesson, index, stage, in_class)
        if index == len(lesson.steps) - 1:
            st.success("Last step of this lesson. The pages stay open for you to explore.")
        keep_answers()
    return waits


def _linked_step() -> tuple[Lesson, int] | None:
    """The lesson step the address names (a bad step number: the nearest, said), remembered as the one followed;
    None, and out of the address, when it names none."""
    warn_bad_param("lesson", lambda raw: raw in LESSONS, "one of the lessons: " + ", ".join(LESSONS))
    if "lesson" not in st.query_params:  # a step of no lesson: said, then out of the address with it
        warn_bad_param("step", lambda raw: False, "a step number beside `lesson`", "no lesson opened")
    found = lesson_step(st.query_params.get("lesson"), st.query_params.get("step"))
    if found is None:
        close_lesson()  # a link to no lesson: out of the address, like any bad value
        return None
    lesson, index = found
    st.session_state[FOLLOWED] = {"lesson": lesson.key, "step": str(index + 1)}
    steps = len(lesson.steps)
    warn_bad_param("step", int_in_range(1, steps), f"a step of this lesson (1 to {steps})", f"opening step {index + 1}")
    if st.query_params.get("step") != str(index + 1):
        st.query_params["step"] = str(index + 1)  # the step opened, as the address says it
    return found


def _step_navigation(lesson: Lesson, index: int, layers: int) -> None:
    """Where the student is, then Back, Next and Leave on one row; the progress bar under them."""
    st.caption(f"Lesson: **{lesson.title}** · step {index + 1} of {len(lesson.steps)}")
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        if st.button("← Back", key="_lesson_back", disabled=index == 0, help="The previous step"):
            go_to_step(lesson, index - 1, layers)
        last = index == len(lesson.steps) - 1
        if st.button("Next →", key="_lesson_next", disabled=last, help="Open the next step", type="primary"):
            go_to_step(lesson, index + 1, layers)
        if st.button("Leave", key="_lesson_leave", help="Close the lesson; the page stays as it is"):
            close_lesson()
            st.rerun()
    st.progress((index + 1) / len(lesson.steps))


def for_the_model(markdown: str) -> str:
    """A lesson's text, written for BERT, with the active model's own special tokens (RoBERTa's `<mask>`, `<s>`)."""
    return in_model_tokens(markdown, active_bundle().description)


def in_one_breath(text: str, limit: int, more: str, show: Callable[[str], object] = st.markdown) -> None:
    """``text``'s first sentences up to ``limit`` words, shown by ``show``; the rest one click away under ``more``."""
    lead, rest = first_words(for_the_model(text), limit)
    show(lead)
    if rest:
        with st.expander(more):
            st.markdown(rest)


def _step_body(
    bundle: ModelBundle, page: str, lesson: Lesson, index: int, stage: DeltaGenerator, in_class: InClass | None
) -> bool:
    """The step's title, text and callouts beside its question (presenting: the question under the text, in the
    step's column, or in ``stage`` while the page waits for it), and the control it talks about; True while the
    page waits for the answer."""
    step, key = lesson.steps[index], question_key(lesson.key, index)
    st.header(step.title, anchor=False)  # h2 under the page title (axe: heading order)
    head = PAGE_HEADS.get(step.page)
    missing_head = needs_head(bundle, head) if head else None
    live = CachedLive(bundle, second_model_choice(bundle))  # a comparison's second model: the page's choice
    missing = missing_head or why_not_asked(step.question, live)
    question = None if missing else step.question  # no "predict first" without a reveal
    # Reading, the question beside the step's text, not under it: it stays on the first screen. Presenting, in the
    # step's column, right under the text, before the callouts.
    settled = key in in_class.room.revealed if in_class else bool(st.session_state.get(answer_key(key)))
    unanswered = not settled and not st.session_state.get(skipped_key(key))
    if question and not presenting():
        tell, ask = st.columns(2, gap="large")
        notes = tell
    else:
        tell, ask, notes = st.container(), st.container(), st.container()
        if question and unanswered and step.page == page:
            ask = stage  # the page waits for it: the question takes the picture's place
    with tell:
        in_one_breath(step.text, STEP_WORDS, "More on this step")
        label = f"Open the {PAGE_TITLES[step.page]} page for this step"
        if step.page != page and st.button(label, key="_lesson_open", type="primary"):
            go_to_step(lesson, index, bundle.capabilities.num_layers)
        if missing:  # on the step's own page, the page's explanation below says where to get the head
            asks = " So this step asks nothing." if step.question else ""
            get_it = "" if step.page == page or not missing_head else f" {GET_THE_HEADS}"
            st.info(f"{missing}{asks}{get_it}", icon=":material/info:")
    with notes:
        for number, callout in enumerate(step.callouts, start=1):
            more = "More on this note" + (f" ({number})" if len(step.callouts) > 1 else "")
            in_one_breath(callout, CALLOUT_WORDS, more, lambda lead: st.info(lead, icon=":material/lightbulb:"))
    waits = False
    if question is not None:
        # Keyed: answering or skipping is no step in the browser's history (components/state/history.py), since
        # Back could not undo it (the answer is the session's, not the address's).
        with ask, st.container(key=NO_HISTORY_ENTRY):
            here = step.page == page and not st.session_state.get(skipped_key(key))
            answered = question_box(question, live, key, in_class, waiting_note=here)
            if answered and ask is stage:
                st.rerun()  # answered where the picture goes: back to the step's column, the page in its place
            waits = here and not answered
            if waits:
                if in_class is None or in_class.member.hosting:  # a class's student's note is in its answer box
                    st.info(_waiting_for(in_class, key))
                st.button(
                    "Show the page without answering",
                    key=f"{key}_skip",
                    on_click=st.session_state.__setitem__,
                    args=(skipped_key(key), True),
                )
    if not waits and step.control and step.page == page and not missing_head:  # a comparison's control is drawn
        st.html(outline(step.control))
        if presenting():  # beside the step, on the same screen: nothing to go to
            st.caption(f"The control this step talks about is outlined: {control_name(step.control)}.")
        else:
            caption, jump = st.columns([5, 1.3], vertical_alignment="center")
            caption.caption(f"The control this step talks about is outlined below: {control_name(step.control)}.")
            with jump:
                st.html(jump_to(step.control, step_tab(step)), unsafe_allow_javascript=True)
    return waits


def _waiting_for(in_class: InClass | None, key: str) -> str:
    """Why the page waits, and for what."""
    if in_class is None:
        return "**Your answer first.** The page opens once you check it: it would give the answer away."
    if in_class.member.hosting:
        return "**The class answers first.** The page opens when you reveal the answers: it would give them away."
    if st.session_state.get(answer_key(key)):
        return "**Your answer is in.** The page opens when the teacher reveals the class's answers and BERT's."
    return "**Your answer first.** It goes to the class; the page opens when the teacher reveals the answers."


def control_name(control: str) -> str:
    """The outlined control in words, so the step does not rely on seeing the outline (WCAG 1.3.3)."""
    return "the tabs" if control.endswith("_tab") else PARAMS[control].meaning.split(" (")[0]


def outline(control: str) -> str:
    """CSS outlining the widget keyed ``control`` (tabs: their tab strip) in the theme's primary colour."""
    target = control_selector(control)
    return f"<style>{target} {{ outline: 3px solid #c0142b; outline-offset: 6px; border-radius: 4px; }}</style>"


JUMP_SCRIPT = """<script>
(() => {  // once per page load: a "Go to it" button brings its control into view and puts focus on it
  if (window.bertlensJump) return;
  window.bertlensJump = true;
  // Where focus goes inside the control: the part a student operates, never a help icon.
  const PREFERRED = ['[role="tab"][aria-selected="true"]', "input:checked", "textarea",
    'input:not([type="hidden"]):not([type="radio"]):not([type="checkbox"])', '[role="slider"]', "input",
    '[aria-pressed="true"]', '[aria-checked="true"]', "button", '[tabindex="0"]'];
  const operable = (box) => {
    for (const selector of PREFERRED) {
      const found = [...box.querySelectorAll(selector)]
        .find((el) => !el.closest('[data-testid="stTooltipHoverTarget"]') && el.checkVisibility());
      if (found) return found;
    }
    return null;  // not drawn yet (a placeholder while its code loads) or not on the page
  };
  const bring = (control, part) => {
    control.scrollIntoView({block: "center"});
    part.focus({preventScroll: true});
  };
  document.addEventListener("click", (event) => {
    const button = event.target.closest?.("button[data-bertlens-jump]");
    if (!button) return;
    const drawn = () => {
      const control = document.querySelector(button.dataset.bertlensJump);
      const part = control && operable(control);
      return part ? [control, part] : null;
    };
    if (!document.querySelector(button.dataset.bertlensJump)) {  // on a tab the student left: open it first
      [...document.querySelectorAll(`${button.dataset.bertlensStrip} [role="tab"]`)]
        .find((el) => el.textContent.trim() === button.dataset.bertlensTab)?.click();
    }
    const until = Date.now() + 15000;
    const wait = () => {
      const found = drawn();
      if (found) return bring(...found);
      if (Date.now() < until) setTimeout(wait, 150);
    };
    wait();
  });
})();
</script>"""


def control_selector(control: str) -> str:
    """The element a step's control is: its widget, or for tabs their tab strip (not the open tab's content)."""
    return f".st-key-{control}" + (' [role="tablist"]' if control.endswith("_tab") else "")


def step_tab(step: Step) -> tuple[str, str] | None:
    """The tab strip parameter and the tab the step opens (its control may sit inside that tab)."""
    return next(((name, str(value)) for name, value in step.params.items() if name.endswith("_tab")), None)


def jump_to(control: str, tab: tuple[str, str] | None) -> str:
    """A button that brings the outlined control into view and puts focus on it: the step's text sits above the
    page, and the control it talks about is often a screen or more below (a projector shows 720 px). When the
    control is not drawn, as on a tab the student has left (``tab``: the step's tab strip parameter and tab), that
    tab is opened first."""
    opens = (
        f' data-bertlens-strip="{html.escape(control_selector(tab[0]))}" data-bertlens-tab="{html.escape(tab[1])}"'
        if tab and tab[0] != control
        else ""
    )
    return (
        f'<button type="button" class="bertlens-jump" data-bertlens-jump="{html.escape(control_selector(control))}"'
        f"{opens}>Go to it ↓</button>"
        "<style>.bertlens-jump { font: inherit; font-size: 0.875em; min-height: 2rem; padding: 0.2rem 0.75rem;"
        " color: #111; background: #fff; border: 1px solid #767676; border-radius: 0.5rem; cursor: pointer; }"
        " .bertlens-jump:hover { border-color: #c0142b; color: #c0142b; }"
        " .bertlens-jump:focus-visible { outline: 2px solid #111; outline-offset: 2px; }</style>" + JUMP_SCRIPT
    )


def question_box(
    question: Question, live: CachedLive, key: str, in_class: InClass | None = None, waiting_note: bool = False
) -> bool:
    """Predict before reveal: the student's answer first, then the model's answer, computed live. True once
    answered (in a live class: once the teacher has revealed the class's answers, drawn beside the model's).

    A form, so a typed word and one click on "Check my answer" (or Enter) are one step. What the question is
    about (its sentences) is shown with it: the page, which shows them too, waits for the answer. The answer
    is kept apart from the answer box, which Streamlit forgets on a page that does not draw it: Back to the
    step, or its page opened after answering on another, find the question answered. In a class the answer is
    stored in the room before the student reads that it is in (another replica finds it there); ``waiting_note``:
    a student's box says under it what the page waits for (the page shows the question in its place)."""
    answered, box = answer_key(key), guess_key(key)
    hosting = in_class is not None and in_class.member.hosting
    revealed = in_class is not None and key in in_class.room.revealed
    if in_class is not None and not hosting and not st.session_state.get(answered):  # a new session: from the room
        with suppress(RoomError):  # closed meanwhile: the next run says so
            st.session_state[answered] = room_store().answer_of(
                in_class.room.code, in_class.member.seat, key, time.time()
            )
    if st.session_state.get(answered) and box not in st.session_state:
        st.session_state[box] = st.session_state[answered]  # the box shows the answer it gave
    if hosting:
        st.markdown(f"**Predict first.** {for_the_model(question.prompt)}")
        _given(question)
        if not revealed:
            assert in_class is not None
            answer_count(in_class.room.code, key)
            st.button(
                "Reveal the answers",
                key=f"{key}_reveal",
                type="primary",
                icon=":material/visibility:",
                on_click=_reveal,
                args=(in_class, key),
            )
            if refused := st.session_state.pop(f"{key}_refused", None):
                st.warning(refused)
            return False
    elif in_class is not None and not revealed:
        _class_answer_box(question, key, in_class, waiting_note)
    elif not revealed:
        _answer_form(question, key, in_class)
    guess = st.session_state.get(answered)
    if in_class is not None and not revealed:
        return False  # the answer is in (said under the question): the reveal is the teacher's
    if not guess and not revealed:
        return False
    reveal = question.reveal(live)
    if in_class is not None:
        try:
            tally = room_store().tally(in_class.room.code, key, time.time())
        except RoomError as error:
            st.warning(literal(str(error)), icon=":material/group_off:")
        else:
            class_answers(tally, question, reveal, None if hosting else guess or "")
    verdict = reveal.judge(guess) if guess and not hosting else None
    if verdict is None and hosting and reveal.answer is not None:
        st.info(f"Computed live, BERT's answer is “**{literal(reveal.answer)}**”. {reveal.detail}")
    elif verdict is None:
        st.info(reveal.detail)
    elif verdict:
        st.success(
            f"Right — you said “{literal(str(guess))}”, and so does the live computation. {reveal.detail}",
            icon=":material/check_circle:",
        )
    else:
        st.warning(  # Material icons: an emoji (✅, ↩️) is an empty box where no emoji font is installed
            f"Not this time — you said “{literal(str(guess))}”; computed live, it is “**{literal(reveal.answer or '')}**”. "
            f"{reveal.detail}",
            icon=":material/undo:",
        )
    return True


def _answer_form(question: Question, key: str, in_class: InClass | None) -> None:
    with st.form(f"{key}_form", border=False):
        st.markdown(f"**Predict first.** {for_the_model(question.prompt)}")
        _given(question)
        if question.choices:
            st.radio("Your answer", question.choices, index=None, key=guess_key(key), horizontal=True)  # 2.5.8
        else:
            st.text_input("Your answer (one word)", key=guess_key(key), max_chars=MAX_ANSWER_CHARS)
        st.form_submit_button(
            "Check my answer" if in_class is None else "Send my answer",
            key=f"{key}_check",
            on_click=_check,
            args=(question, key, in_class),
        )
        if refused := st.session_state.pop(f"{key}_refused", None):
            st.warning(refused)  # an alert (screen readers announce it); our own words


@st.fragment
def _class_answer_box(question: Question, key: str, in_class: InClass, waiting_note: bool) -> None:
    """A student's answer box in a class, with what the page waits for: sending an answer reruns only this (the
    store's write, then "Your answer is in"), not the page, which does not change until the teacher reveals. A
    class answering at once ran the whole page once per answer: the server's queue made the slowest wait seconds.

    The lesson panel, which keeps the session's answers in the tab for a reload (``keep_answers``), is not drawn
    again then: the box's rerun after a taken answer keeps them itself, in a place of its own in the sidebar (kept
    on every run: a fragment writes outside itself only where the page's last run had it write)."""
    _answer_form(question, key, in_class)
    if waiting_note:
        st.info(_waiting_for(in_class, key))
    handover = st.sidebar.empty()
    if st.session_state.pop(TAKEN_IN_BOX, False):
        keep_answers(handover)


def _given(question: Question) -> None:
    if question.given:
        mask = active_bundle().description.mask_token  # the sentence as the page shows it
        st.markdown(
            "  \n".join(f"{label}: **{literal(with_mask_token(text, mask))}**" for label, text in question.given)
        )


def _check(question: Question, key: str, in_class: InClass | None) -> None:
    """The answer box's value taken (in a class: stored in the room first) before the run the click starts, so
    that the run draws the question answered, in its place beside the page (the box is not drawn twice: keyboard
    focus stays in it); why not, when refused."""
    guess = st.session_state.get(guess_key(key))
    if not guess:
        st.session_state[f"{key}_refused"] = "Choose or type an answer first."
        return
    try:
        if in_class is not None:
            answer = answer_form(guess, question.choices, LIMITS.max_answer_chars)
            room_store().answer(in_class.room.code, in_class.member.seat, key, answer, time.time())
    except RoomError as error:
        st.session_state[f"{key}_refused"] = str(error)
        return
    st.session_state[answer_key(key)] = guess
    if in_class is not None:
        st.session_state[TAKEN_IN_BOX] = True


def _reveal(in_class: InClass, key: str) -> None:
    """The teacher's Reveal, before the run it starts (which, like every student's, finds the question revealed)."""
    try:
        room_store().reveal(in_class.room.code, in_class.member.secret, key, time.time())
    except RoomError as error:
        st.session_state[f"{key}_refused"] = str(error)


def lesson_list(bundle: ModelBundle) -> None:
    """Every lesson with a Start button (home page), and what the active model cannot show of it."""
    for lesson in LESSONS.values():
        lacking = sorted(head for head in heads_needed(lesson.steps) if needs_head(bundle, head))
        note = f" Its {' and '.join(lacking)} steps need bert-base-uncased." if lacking else ""
        button, summary = st.columns([2, 3], vertical_alignment="center")
        start = button.button(f"Start the lesson “{lesson.title}”", key=f"_lesson_start_{lesson.key}")
        summary.caption(f"{lesson.summary} {len(lesson.steps)} steps.{note}")
        if start:
            go_to_step(lesson, 0, bundle.capabilities.num_layers)
