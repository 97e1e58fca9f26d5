"""Ready-made sentence sets for the word-senses page (URL ``preset``)."""

from __future__ import annotations

from dataclasses import dataclass

from bertlens.senses import LabelledSentence


@dataclass(frozen=True)
class SensePreset:
    word: str
    description: str
    sentences: tuple[LabelledSentence, ...]
    references: tuple[str, ...]  # words read on their own, to compare with the word in context


def _labelled(*groups: tuple[str, tuple[str, ...]]) -> tuple[LabelledSentence, ...]:
    return tuple(LabelledSentence(sentence, sense) for sense, sentences in groups for sentence in sentences)


# Seed 000 ("how does BERT understand the word 'field'?"), verbatim: eight sentences, five senses.
FIELD = SensePreset(
    word="field",
    description="“field” in eight sentences with five senses (from the Discover BERT notebook)",
    sentences=(
        LabelledSentence("Zinedine Zidane is the greatest on the field.", "Football Pitch"),
        LabelledSentence("On the field, Michel Platini was undeniably different.", "Football Pitch"),
        LabelledSentence("Jonah Lomu reigned on the field.", "Rugby Pitch"),
        LabelledSentence("Barry Bonds had no contender on the field.", "Baseball"),
        LabelledSentence("The crop is growing in the field.", "Agriculture Field"),
        LabelledSentence("This field was harvested by the farmer.", "Agriculture Field"),
        LabelledSentence("He hopes to find work in the informatics field.", "Domain"),
        LabelledSentence("Mary Frances Lyon is a pioneer in the field of genetic research.", "Domain"),
    ),
    references=("pitch", "farm", "science"),
)

# Seed 004's two sentences first, then more of each sense so PCA has something to show.
PYTHON = SensePreset(
    word="python",
    description="“python” the snake and the programming language (from the Introduction to BERT notebook)",
    sentences=_labelled(
        (
            "snake",
            (
                "I love my pet python",
                "The python swallowed a whole rabbit.",
                "A python squeezes its prey before eating it.",
                "The zookeeper fed the python a mouse.",
                "The python coiled around a branch of the tree.",
                "We saw a huge python in the jungle.",
            ),
        ),
        (
            "programming language",
            (
                "I love coding in python",
                "She wrote a Python script to rename her files.",
                "Python is a popular programming language.",
                "He installed the latest version of Python on his laptop.",
                "The data scientist cleaned the data in python.",
                "My first program was written in Python.",
            ),
        ),
    ),
    references=("snake", "programming"),
)

BANK = SensePreset(
    word="bank",
    description="“bank” where money is kept and the side of a river",
    sentences=_labelled(
        (
            "money",
            (
                "I deposited my salary at the bank.",
                "The bank approved our mortgage application.",
                "She works as a cashier at the bank downtown.",
                "The bank raised its interest rates again.",
                "He withdrew cash from the bank this morning.",
                "The bank charged a fee for the transfer.",
            ),
        ),
        (
            "river",
            (
                "We had a picnic on the bank of the river.",
                "The fisherman sat on the muddy bank all afternoon.",
                "Flood water spilled over the bank of the stream.",
                "Wild flowers grew along the river bank.",
                "The canoe drifted towards the grassy bank.",
                "Ducks rested on the bank beside the water.",
            ),
        ),
    ),
    references=("money", "river"),
)

APPLE = SensePreset(
    word="apple",
    description="“apple” the fruit and the company",
    sentences=_labelled(
        (
            "fruit",
            (
                "She ate a crisp apple for lunch.",
                "The apple fell from the tree.",
                "Apple pie is Grandma's favourite dessert.",  # three per sense open with the word: at hidden
                "He sliced an apple into the salad.",  # state 0 a point is the word plus its position, and
                "Apple slices make a healthy snack.",  # positions alone once set the senses apart there
                "Apple trees blossom in the spring.",
            ),
        ),
        (
            "company",
            (
                "Apple released a new iPhone this year.",
                "Apple shares rose after the earnings report.",
                "She bought an Apple laptop for university.",
                "The chief executive of Apple gave the keynote.",
                "Apple opened a new store in Paris.",
                "Developers build apps for Apple devices.",
            ),
        ),
    ),
    references=("fruit", "company"),
)

PRESETS: dict[str, SensePreset] = {"field": FIELD, "python": PYTHON, "bank": BANK, "apple": APPLE}
DEFAULT_PRESET = next(iter(PRESETS))  # the picker's first choice: what the page opens with
