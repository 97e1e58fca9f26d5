"""Counts in words: "1 piece", "3 pieces" (never "1 pieces" or "piece(s)"); a text's lead, as much as a student
reads in one breath."""

from __future__ import annotations

import re
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


# What ends a sentence for ``first_words``: ".", "?" or "!", any closing quotes, brackets or Markdown marks right after
# it, then white space; but not the period of an abbreviation.
_SENTENCE_END = re.compile(r"[.?!][”’\"')\]*_`]*(?=\s)")
ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "cf.", "vs.")
_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))


def _abbreviated(sentence: str) -> bool:
    """Whether ``sentence`` ends with an abbreviation as a word of its own ("see e.g."; not "sing." or "Numpy.")."""
    return any(sentence.endswith(short) and not sentence[: -len(short)][-1:].isalnum() for short in ABBREVIATIONS)


def _closed(prefix: str) -> bool:
    """Whether ``prefix`` leaves no bracket, curly quote, code span, bold or italics open."""
    if any(prefix.count(opening) > prefix.count(closing) for opening, closing in _PAIRS):
        return False
    return prefix.count("**") % 2 == 0 and prefix.replace("**", "").count("*") % 2 == 0 and prefix.count("`") % 2 == 0


def first_words(text: str, limit: int) -> tuple[str, str]:
    """``(lead, rest)``: the longest run of whole sentences from the start of ``text`` with at most ``limit`` words
    (split at white space), and what follows it: ``rest`` is "" when the whole text fits, ``lead`` "" when its first
    sentence alone is longer. Both are stripped; ``lead``, white space, ``rest`` give ``text`` again.

    A sentence ends at ".", "?" or "!" followed by white space, with any closing quotes, brackets or Markdown marks
    between (``… the next word.”** It does not.``). No other mark ends one: not a colon, a semicolon or a dash. Nor
    does the period of an abbreviation (``e.g.``, ``i.e.``, ``et al.``, ``cf.``, ``vs.``), so "e.g. I am Matt" and
    "Clark et al. (2019) found" stay whole, nor an end inside brackets, curly quotes, a code span, bold or italics:
    a lead never leaves a parenthesis or Markdown open.
    """
    text = text.strip()
    if len(text.split()) <= limit:
        return text, ""
    cut = 0
    for end in _SENTENCE_END.finditer(text):
        lead = text[: end.end()]
        if len(lead.split()) > limit:
            break
        if not _abbreviated(text[: end.start() + 1]) and _closed(lead):
            cut = end.end()
    return text[:cut], text[cut:].strip()
