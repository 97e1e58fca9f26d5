"""Counts in words: "1 piece", "3 pieces" (never "1 pieces" or "piece(s)")."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

MAX_LISTED = 15  # items a message lists before "… and N more"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun in the right number: ``plural(1, "piece")`` → "1 piece", ``plural(3, "piece")`` → "3 pieces"."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def significant(x: float, figures: int) -> str:
    """``x`` to ``figures`` significant figures, a last zero kept, so that numbers side by side read alike
    (0.0001980 beside 0.0002411, not 0.000198), and no point left alone at the end (100, not 100.)."""
    return f"{float(x):#.{figures}g}".rstrip(".")


def percent(p: float, digits: int = 1) -> str:
    """A probability as a percentage with ``digits`` decimals; below 10^-digits %, two significant figures, so that a
    small one reads neither 0.0% nor twice its size: 12.3%, 0.050%, 0.0033% (``digits=2``: 43.21%, 0.0051%). Two
    figures even where the second is 0 (0.0050%, not 0.005%, beside a 0.0049%)."""
    return f"{p:.{digits}%}" if p == 0 or 100 * p >= 10**-digits else f"{significant(100 * p, 2)}%"


def agree(n: int, singular: str, plural_verb: str) -> str:
    """The verb form that agrees with ``n``: ``agree(1, "is", "are")`` → "is"."""
    return singular if n == 1 else plural_verb


def numbered(noun: str, numbers: Sequence[int]) -> str:
    """The noun and the numbers it names: ``numbered("Sentence", [2])`` → "Sentence 2", ``[0, 3]`` → "Sentences 0, 3"."""
    return f"{noun if len(numbers) == 1 else noun + 's'} {', '.join(map(str, numbers))}"


def listed(items: Iterable[str], separator: str = ", ", limit: int = MAX_LISTED) -> str:
    """Each item once, in order, the first ``limit`` of them: "a, b, c … and 4 more"."""
    unique = list(dict.fromkeys(items))
    shown = separator.join(unique[:limit])
    return shown + (f" … and {len(unique) - limit:,} more" if len(unique) > limit else "")


def shortened(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when cut: "a very long wo…"."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only spaces and invisible format characters (a zero-width space, a soft
    hyphen, a direction mark), which the tokenizer drops, leaving [CLS] [SEP] to analyse as if something were typed."""
    return all(char.isspace() or unicodedata.category(char) == "Cf" for char in text)


def first_words(text: str, limit: int) -> tuple[str, str]:
    """(lead, rest): ``text``'s whole first sentences up to ``limit`` words, and the rest ("" when all fit).
    PLACEHOLDER until the student-text branch lands."""
    import re  # noqa: PLC0415

    sentences = re.split(r"(?<=[.?!])\s+(?=[A-Z“\"(*])", text.strip())
    lead: list[str] = []
    for sentence in sentences:
        if lead and len(" ".join([*lead, sentence]).split()) > limit:
            break
        lead.append(sentence)
    return " ".join(lead), text.strip()[len(" ".join(lead)) :].strip()
