"""A live class's Word senses round: each student sends one sentence with the lesson's word, and the class's map
places every sentence the teacher has not hidden beside the step's preset sentences, live.

The map is the page's own: the preset's sentences fix the PCA axes (``cache.projection``'s fitted sentences) and
each class sentence is placed on them, exactly as the page places a sentence typed in its own box; at the hidden
state of the page's *Hidden state* control. Each refresh is one store query; the vectors of a sentence already
read come from the model's sentence cache (``bertlens.senses.SentenceVectorCache``), so a new sentence costs one
sentence's pass. Students' text is shown literally: ``st.text``, tables, and escaped chart labels.
"""

from __future__ import annotations

import time
from contextlib import suppress
from dataclasses import dataclass

import streamlit as st

from bertlens.budgets import Budgets
from bertlens.rooms import LIMITS, Entry, RoomError, clean_text
from bertlens.sense_presets import PRESETS, SensePreset
from bertlens.senses import LabelledSentence, layer_label
from components.services import cache
from components.services.cache import Query
from components.services.classroom import room_store
from components.services.text import literal
from components.state.answers import question_key
from components.ui.classroom import WATCH_SECONDS
from components.ui.layout import Stage
from components.ui.lessons import InClass
from components.views.senses.sections import (
    YOUR_SENSE,
    SenseRequest,
    found_enough,
    occurrence_map,
    sentences_to_read,
)

CLASS_SENSE = "the class"  # the label of the class's sentences on the map (the student's own: YOUR_SENSE)
CLASS_MAP = "senses-class"  # the class map's chart and table keys and file names


@dataclass(frozen=True)
class SentenceRound:
    """A Word senses round of this tab's live class: the room's step gathers sentences with ``preset``'s word."""

    in_class: InClass
    key: str  # the store's round key: the step's question key
    preset: SensePreset

    @property
    def sent(self) -> str:
        """Where this session keeps the sentence it sent (the student's star on the map)."""
        return f"{self.key}_sentence_sent"

    @property
    def box(self) -> str:
        """The key of the student's sentence box."""
        return f"{self.key}_sentence"

    @property
    def refused(self) -> str:
        """Where the callback leaves why it refused the last send."""
        return f"{self.key}_sentence_refused"


def sentence_round(stage: Stage) -> SentenceRound | None:
    """The round this page takes part in: the tab is in a live class, on the class's step, and that step gathers
    the class's sentences; None otherwise (a student looking around elsewhere sends nothing)."""
    if stage.in_class is None or stage.step is None:
        return None
    lesson, index = stage.step
    step, room = lesson.steps[index], stage.in_class.room
    preset = PRESETS.get(str(step.params.get("preset", "")))
    if not step.class_sentences or preset is None or (lesson.key, index + 1) != (room.lesson, room.step):
        return None
    return SentenceRound(stage.in_class, question_key(lesson.key, index), preset)


def sentence_box(round_: SentenceRound, query: Query) -> None:
    """A student's box for their one sentence of the round (``_sentence_form``). Not for the teacher.

    A new session (a reload, another replica) reads the sentence the student sent back from the room, once: the
    box shows it and the class's map stars it, as ``question_box`` does with an answer. A hidden sentence too: the
    student still sees their own sentence in the box, and the map says the teacher hid it."""
    if round_.in_class.member.hosting:
        return
    if round_.sent not in st.session_state:  # a new session: from the room
        with suppress(RoomError):  # closed meanwhile: the class map says so (and the next run asks again)
            member = round_.in_class.member
            st.session_state[round_.sent] = room_store().sentence_of(member.code, member.seat, round_.key, time.time())
    if st.session_state.get(round_.sent) and round_.box not in st.session_state:
        st.session_state[round_.box] = st.session_state[round_.sent]  # the box shows the sentence it sent
    _sentence_form(round_, query)


@st.fragment
def _sentence_form(round_: SentenceRound, query: Query) -> None:
    """The box, "Send my sentence" and what became of the last send. Sending reruns only this: the sentence is
    stored in the click's callback, then the note says it is in; the page and its maps are not drawn again (the
    class's map shows the sentence at its next look at the room, within ``WATCH_SECONDS``), as with the answer box
    (``components.ui.lessons``). Sending again replaces it."""
    word = round_.preset.word
    with st.form(f"{round_.key}_sentence_form", border=False):
        st.text_input(
            f"Your sentence with “{word}”",
            key=round_.box,
            max_chars=LIMITS.max_sentence_chars,
            help=f"One sentence of yours, at most {LIMITS.max_sentence_chars} characters, with “{word}” as a whole "
            "word: it joins the class's map, and sending again replaces it.",
        )
        st.form_submit_button("Send my sentence", on_click=_send, args=(round_, query))
    if refused := st.session_state.pop(round_.refused, None):
        st.warning(literal(refused), icon=":material/error:")
    elif st.session_state.get(round_.sent):
        st.success(
            f"Your sentence is in: it is on the class's map within {WATCH_SECONDS:g} s.", icon=":material/check_circle:"
        )


def _send(round_: SentenceRound, query: Query) -> None:
    """The sentence checked (length, the word as a whole word) and stored before the run the click starts."""
    raw, word = st.session_state.get(round_.box) or "", round_.preset.word
    try:
        sentence = clean_text(raw, LIMITS.max_sentence_chars, "a sentence")
        if not cache.occurrences_in(query, sentence, word):
            raise RoomError(
                f"Your sentence's “{word}” comes after the first {query.max_length:,} tokens, which are all the "
                "model reads."
                if cache.occurrences_in(query, sentence, word, past_the_cut=True)
                else f"Your sentence has no “{word}” (as a whole word): write one with it."
            )
        member = round_.in_class.member
        room_store().add_sentence(member.code, member.seat, round_.key, sentence, time.time())
    except RoomError as error:
        st.session_state[round_.refused] = str(error)
        return
    st.session_state[round_.sent] = sentence


@st.fragment(run_every=WATCH_SECONDS)
def class_map(round_: SentenceRound, query: Query, layer: str, method: str, budgets: Budgets) -> None:
    """The class's map, every ``WATCH_SECONDS``: one read of the round's sentences; the teacher's list of them,
    each with Hide or Show, above it."""
    hosting, word = round_.in_class.member.hosting, round_.preset.word
    st.subheader(f"Your class's “{word}”", anchor=False)
    try:
        entries = room_store().sentences(round_.in_class.room.code, round_.key, time.time(), with_hidden=hosting)
    except RoomError as error:
        st.warning(literal(str(error)), icon=":material/group_off:")
        return
    shown = [entry.sentence for entry in entries if not entry.hidden]  # only these are read
    mine = None if hosting else st.session_state.get(round_.sent)
    if hosting:
        _sentence_list(round_, entries)
    elif mine and mine not in shown:
        st.caption("Your sentence is not on the class's map: the teacher has hidden it.")
    if over := budgets.first_only("sentences", len(round_.preset.sentences) + len(shown), "sentences"):
        st.warning(over)
        shown = shown[: max(0, budgets.sentences - len(round_.preset.sentences))]
    items = (
        *round_.preset.sentences,
        *(LabelledSentence(sentence, YOUR_SENSE if sentence == mine else CLASS_SENSE) for sentence in shown),
    )
    chosen = sentences_to_read(query, SenseRequest(word, items, ()), "", budgets)
    if chosen is None:
        return
    sentences, labels, _ = chosen
    fitted = sum(label not in (CLASS_SENSE, YOUR_SENSE) for label in labels)  # the preset's: they come first
    words = cache.word_vectors(query, word, sentences, ())
    if not found_enough(words, listed=len(sentences)):
        return
    flat = "PCA 2D" if method == "PCA 3D" else method  # the class's map is flat: PC1 × PC2 of the same PCA
    projection = cache.projection(query, word, sentences, (), layer, flat, fitted)
    point_labels = [labels[o.sentence_index] for o in words.occurrences]
    title = f"The class's “{word}” — {layer_label(layer, words.num_layers)}, {flat}"
    occurrence_map(words, point_labels, projection, title, layer, name=CLASS_MAP)
    st.caption(
        f"{len(shown)} of the class's sentences on the map (“{CLASS_SENSE}”"
        + ("" if hosting else f"; yours: “{YOUR_SENSE}”")
        + f"), placed on the map of the preset's {len(round_.preset.sentences)} sentences. Change the *Hidden state* "
        "to see the senses separate layer by layer."
    )


def _sentence_list(round_: SentenceRound, entries: tuple[Entry, ...]) -> None:
    """The teacher's list: each sentence as typed, with Hide (or Show). A hidden sentence's text is not shown
    again: the teacher's screen is the projector."""
    if not entries:
        st.caption(f"No sentences yet: the students' boxes ask for one with “{round_.preset.word}”.")
    for number, entry in enumerate(entries, start=1):
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.text(f"{number}. (hidden from the map)" if entry.hidden else f"{number}. {entry.sentence}")
            st.button(
                f"Show {number}" if entry.hidden else f"Hide {number}",
                key=f"_class_hide_{entry.id}",
                on_click=_hide,
                args=(round_, entry.id, not entry.hidden),
                help="Back on the map" if entry.hidden else "Off the projector and every student's map",
            )
    if refused := st.session_state.pop(f"{round_.key}_hide_refused", None):
        st.warning(literal(refused), icon=":material/block:")


def _hide(round_: SentenceRound, entry: int, hidden: bool) -> None:
    """The teacher's Hide or Show, before the run it starts."""
    member = round_.in_class.member
    try:
        room_store().hide(member.code, member.secret, entry, hidden, time.time())
    except RoomError as error:
        st.session_state[f"{round_.key}_hide_refused"] = str(error)
