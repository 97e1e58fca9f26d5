"""One word in many sentences: its contextual vectors at every layer, and what they show.

Input is a list of sentences, each with an optional sense label (pasted ``sentence | sense``
lines or a CSV). Every occurrence of the target word becomes one point: the mean of its
word pieces' hidden states. All sentences go through the model's encoder as one padded batch
(attention mask on), split into chunks only to bound memory. Each sentence's vectors are kept per
model (``SentenceVectorCache``), so a new sentence beside the same presets costs one sentence's pass.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from sklearn.decomposition import PCA
from sklearn.manifold import MDS
from sklearn.metrics import silhouette_score
from sklearn.metrics.pairwise import cosine_distances, cosine_similarity

from bertlens.analysis import Encoding, encode, model_engine, normalizer_of, padded_batch, through_marks
from bertlens.family import encoder_pass
from bertlens.layers import hidden_state_label
from bertlens.lru import BytesLRU, PerModel
from bertlens.models import AnyBundle
from bertlens.positions import NO_SPREAD
from bertlens.table_input import TableInputError, decoded, read_rows
from bertlens.wording import blank, plural

SEPARATOR = "|"
MAX_WORD_CHARS = 50
LAST_K_CHOICES = (2, 3, 4)  # "mean of the last k hidden states" options (seed 001 uses the last four)
PROJECTIONS = ("PCA 2D", "PCA 3D", "MDS 2D")  # MDS runs on cosine distances

Progress = Callable[[int, int], None]  # (sentences done, sentences in all)


class SenseInputError(TableInputError):
    """Sentences that cannot be read; the message says where and why."""


@dataclass(frozen=True)
class LabelledSentence:
    sentence: str
    sense: str  # "" when unlabelled


# ---------------------------------------------------------------- input


def parse_lines(text: str) -> list[LabelledSentence]:
    """``sentence | sense`` lines (the sense is optional; blank lines are skipped)."""
    items = []
    for number, line in enumerate(text.splitlines(), start=1):
        if blank(line):
            continue
        sentence, _, sense = line.partition(SEPARATOR)
        if SEPARATOR in sense:
            raise SenseInputError(f"Line {number} has more than one '{SEPARATOR}': write `sentence | sense`.")
        if blank(sentence):
            raise SenseInputError(f"Line {number} has a sense label but no sentence before the '{SEPARATOR}'.")
        items.append(LabelledSentence(sentence.strip(), sense.strip()))
    return items


def parse_csv(data: bytes | str) -> list[LabelledSentence]:
    """A CSV with a ``sentence`` column and an optional ``sense`` column (header names ignore case)."""
    items = []
    for number, row in enumerate(read_rows(data, ("sentence",), ("sense",), rows_are="sentences"), start=2):
        if blank(row["sentence"]):
            raise SenseInputError(f"CSV row {number} has no sentence.")
        items.append(LabelledSentence(row["sentence"], row["sense"]))
    return items


def parse_coarsewsd(data: bytes, gold: bytes, classes_map: bytes | None = None) -> list[LabelledSentence]:
    """CoarseWSD-20's files for one word, as seed 001 reads them: ``….data.txt`` (``word position<TAB>sentence``
    per line), ``….gold.txt`` (the sense's number per line) and, for the senses' names, ``classes_map.txt`` (JSON,
    number → name). The word position is not needed: every occurrence of the word is found by its spelling."""
    sentences, senses = [sentence for _, sentence in _data_lines(data)], []
    for number, line in enumerate(decoded(gold, "gold file").splitlines(), start=1):
        if line.strip():
            if not line.strip().isdigit():
                raise SenseInputError(f"Line {number} of the gold file is not a sense number.")
            senses.append(line.strip())
    if len(sentences) != len(senses):
        raise SenseInputError(
            f"The data file has {plural(len(sentences), 'sentence')} and the gold file {plural(len(senses), 'label')}: "
            "they must be the same word's pair (e.g. train.data.txt with train.gold.txt)."
        )
    names: dict[str, str] = {}
    if classes_map is not None:
        try:
            names = {str(key): str(value) for key, value in json.loads(decoded(classes_map, "classes map")).items()}
        except (ValueError, AttributeError, RecursionError) as error:  # RecursionError: JSON nested 100,000 deep
            raise SenseInputError("classes_map.txt is not a JSON object of sense numbers and names.") from error
    if not sentences:
        raise SenseInputError("The data file has no sentences.")
    return [LabelledSentence(sentence, names.get(sense, sense)) for sentence, sense in zip(sentences, senses)]


def drawn_at_random(items: Sequence[LabelledSentence], count: int) -> tuple[LabelledSentence, ...]:
    """``count`` of ``items`` drawn at random, in their own order, the same draw every time (a rerun or a reload
    shows the same map, and reuses the cached vectors). Seed 001 draws its 100 CoarseWSD-20 sentences at random: a
    dataset's file can list its senses one after another, and its first sentences would then all be one sense."""
    if len(items) <= count:
        return tuple(items)
    return tuple(items[i] for i in sorted(random.Random(0).sample(range(len(items)), count)))


def _data_lines(data: bytes) -> list[tuple[int, str]]:
    """A CoarseWSD-20 data file's lines: (word position, sentence)."""
    lines = []
    for number, line in enumerate(decoded(data, "data file").splitlines(), start=1):
        if line.strip():
            position, tab, sentence = line.partition("\t")
            if not tab or not position.strip().isdigit() or not sentence.strip():
                raise SenseInputError(f"Line {number} of the data file is not `word position<TAB>sentence`.")
            lines.append((int(position), sentence.strip()))
    return lines


def _coarsewsd_files(files: dict[str, bytes]) -> tuple[bytes, bytes, bytes | None] | None:
    """CoarseWSD-20's data, gold and (optional) classes map among the uploaded files, by name; None if not those."""
    names = {name.lower(): name for name in files}
    data = [name for name in names if name.endswith("data.txt")]
    gold = [name for name in names if name.endswith("gold.txt")]
    classes = [name for name in names if name.endswith("classes_map.txt")]
    if len(data) == len(gold) == 1 and len(files) == 2 + len(classes) and len(classes) <= 1:
        return files[names[data[0]]], files[names[gold[0]]], files[names[classes[0]]] if classes else None
    return None


def uploaded_word(files: dict[str, bytes]) -> str | None:
    """The word CoarseWSD-20's files are about (they name it only in their folder's name, as seed 001's
    ``focal_word``): the most common word at the data file's word positions; None for other files."""
    if (coarse := _coarsewsd_files(files)) is None:
        return None
    words: Counter[str] = Counter()
    for position, sentence in _data_lines(coarse[0]):
        tokens = sentence.split()
        if position < len(tokens) and (word := tokens[position].strip(".,;:!?'\"()").lower()):
            words[word] += 1
    return words.most_common(1)[0][0] if words else None


def read_sentence_files(files: dict[str, bytes]) -> list[LabelledSentence]:
    """The uploaded files, by name: one CSV file (``parse_csv``), or CoarseWSD-20's pair (``parse_coarsewsd``)."""
    if (coarse := _coarsewsd_files(files)) is not None:
        return parse_coarsewsd(*coarse)
    if len(files) == 1 and next(iter(files)).lower().endswith(".csv"):
        return parse_csv(next(iter(files.values())))
    raise SenseInputError(
        "Choose one CSV file, or CoarseWSD-20's files for one word: a `….data.txt` with its `….gold.txt` "
        "(and `classes_map.txt` for the senses' names)."
    )


def word_problem(word: str) -> str | None:
    """A message for a target word that cannot be looked for, or None."""
    if blank(word):
        return "Type the word to look for."
    if len(word.strip()) > MAX_WORD_CHARS:
        return f"The word is longer than {MAX_WORD_CHARS} characters; type a single word."
    return None


# ---------------------------------------------------------------- finding the word


@dataclass(frozen=True)
class Occurrence:
    sentence_index: int
    start: int  # character span of the word in its sentence
    end: int
    positions: tuple[int, ...]  # token positions of its word pieces
    pieces: tuple[str, ...]


def folded(text: str, normalize: Callable[[str], str]) -> tuple[str, list[int]]:
    """``text`` as the tokenizer reads it (``normalize``: its normalizer), in lower case, with the index in
    ``text`` of each character of the result. Character by character, each distinct character normalized once;
    the spaces the normalizer puts around a Chinese character are left out."""
    reads: dict[str, str] = {}
    pieces, where = [], []
    for i, char in enumerate(text):
        if (piece := reads.get(char)) is None:
            piece = reads[char] = (normalize(char) if char.isspace() else "".join(normalize(char).split())).lower()
        pieces.append(piece)
        where += [i] * len(piece)
    return "".join(pieces), where


def _without_leading_space(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    return start, end


def find_word(
    encoding: Encoding,
    sentence: str,
    word: str,
    normalize: Callable[[str], str] = str,
    split_at_punctuation: bool = True,
) -> list[tuple[int, int, tuple[int, ...]]]:
    """Every (start, end, token positions) where ``word`` stands as a whole word, as the tokenizer reads both
    (``normalize``: its normalizer, ``analysis.normalizer_of``) and ignoring case: for an uncased BERT "café"
    with its accent typed apart, "cafe" and "CAFÉ" are one word, as they are to the model.

    A match counts when its tokens begin and end exactly at its edges and at word edges of the
    tokenizer's own word split (``word_ids``): "field" is not found inside "fields" or "midfield". A tokenizer
    whose words run from space to space (SentencePiece: ``split_at_punctuation=False``) reads "book." as one word:
    there, a character other than a letter or a digit next to the match is a word edge too.
    Only the part of the sentence the encoding read is searched (a word after a cut has no tokens),
    and each match finds its tokens by bisection: the cost grows with the matches, not matches × tokens.
    """
    word_ids = encoding.word_ids
    offsets = [_without_leading_space(sentence, a, b) for a, b in encoding.offsets]  # byte-level BPE's "Ġbook"
    tokens = [i for i, (a, b) in enumerate(offsets) if word_ids[i] is not None and b > a]  # in text order
    starts = [offsets[i][0] for i in tokens]
    furthest_end = list(itertools.accumulate((offsets[i][1] for i in tokens), max))
    read = furthest_end[-1] if tokens else 0
    text, where = folded(sentence[:read], normalize)
    target = folded(word.strip(), normalize)[0]
    found = []
    for match in re.finditer(re.escape(target), text) if target else ():
        start, end = where[match.start()], where[match.end() - 1] + 1
        # tokens overlapping [start, end): from the first whose span reaches past start to the last starting before end
        window = tokens[bisect.bisect_right(furthest_end, start) : bisect.bisect_left(starts, end)]
        positions = tuple(i for i in window if offsets[i][1] > start)
        if not positions:
            continue  # characters the tokenizer drops
        first, last = positions[0], positions[-1]
        before_ok = first == 0 or word_ids[first - 1] != word_ids[first]
        after_ok = last + 1 == len(word_ids) or word_ids[last + 1] != word_ids[last]
        if not split_at_punctuation:
            before_ok = before_ok or start == 0 or not sentence[start - 1].isalnum()
            after_ok = after_ok or end >= len(sentence) or not sentence[end].isalnum()
        whole = offsets[first][0] == start and offsets[last][1] == end and before_ok and after_ok
        if whole:
            found.append((start, through_marks(sentence, end), positions))
    return found


# ---------------------------------------------------------------- the batched forward pass


def _chunks(lengths: Sequence[int], max_sentences: int, max_tokens: int) -> list[list[int]]:
    """Sentence indices, shortest first, in chunks of at most ``max_sentences`` and ``max_tokens`` padded tokens."""
    chunks: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda i: lengths[i]):
        if chunks and len(chunks[-1]) < max_sentences and (len(chunks[-1]) + 1) * lengths[i] <= max_tokens:
            chunks[-1].append(i)
        else:
            chunks.append([i])
    return chunks


SENTENCE_CACHE_BYTES = 64 << 20


class SentenceVectorCache(BytesLRU[np.ndarray]):
    """One model's per-sentence piece means, least recently used out first, bounded in bytes.

    The arrays are made read-only: every caller shares them.
    """

    def __init__(self, max_bytes: int = SENTENCE_CACHE_BYTES):
        super().__init__(max_bytes, lambda vectors: vectors.nbytes)

    def put(self, key: Hashable, vectors: np.ndarray) -> None:
        vectors.setflags(write=False)
        super().put(key, vectors)


_sentence_caches: PerModel[SentenceVectorCache] = PerModel(SentenceVectorCache)


def sentence_vector_cache(bundle: AnyBundle) -> SentenceVectorCache:
    """The per-sentence cache of ``bundle``'s model (it goes when the model goes)."""
    return _sentence_caches.of(bundle.model)


def batched_piece_means(
    bundle: AnyBundle,
    encodings: Sequence[Encoding],
    selections: Sequence[Sequence[tuple[int, ...]]],
    progress: Progress | None = None,
    chunk_sentences: int = 32,
    chunk_tokens: int = 8192,
) -> list[np.ndarray]:
    """For each sentence and each selected position group: the mean hidden state at every layer.

    Sentences already read (same ids, same groups) come from the model's ``SentenceVectorCache``;
    the rest go through one padded batch with an attention mask, so padding changes nothing, split
    into chunks of similar length only to bound memory. Returns, per sentence, an array
    (groups, layers + 1, hidden).
    """
    model, described = bundle.model, bundle.description
    cache = sentence_vector_cache(bundle)
    keys = [(e.input_ids, e.token_type_ids, tuple(map(tuple, groups))) for e, groups in zip(encodings, selections)]
    results: list[np.ndarray | None] = [cache.get(key) for key in keys]
    todo = [i for i, found in enumerate(results) if found is None]
    done = len(encodings) - len(todo)
    for chunk in _chunks([len(encodings[i]) for i in todo], chunk_sentences, chunk_tokens):
        chunk = [todo[i] for i in chunk]
        batch = padded_batch([encodings[i] for i in chunk], bundle.tokenizer.pad_token_id, bundle.device)
        groups = [selections[i] for i in chunk]

        def piece_means(
            batch: dict[str, torch.Tensor] = batch, groups: list[Sequence[tuple[int, ...]]] = groups
        ) -> list[np.ndarray]:
            with torch.inference_mode():
                out = encoder_pass(model, described, batch, attentions=False)
                hidden = torch.stack(out.hidden_states, dim=1)  # (batch, layers + 1, tokens, hidden)
                return [
                    torch.stack([hidden[row][:, list(group)].mean(dim=1) for group in row_groups]).float().cpu().numpy()
                    if row_groups
                    else np.zeros((0, hidden.shape[1], hidden.shape[-1]), dtype=np.float32)
                    for row, row_groups in enumerate(groups)
                ]

        # Each chunk queues on its own (others get turns); progress is reported from the caller's thread.
        key = ("piece_means", tuple(keys[i] for i in chunk))
        for i, vectors in zip(chunk, model_engine(bundle).run(key, piece_means, tokens=batch["input_ids"].numel())):
            cache.put(keys[i], vectors)
            results[i] = vectors
        done += len(chunk)
        if progress:
            progress(done, len(encodings))
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]  # every entry filled above


@dataclass(frozen=True, eq=False)
class WordVectors:
    """Every occurrence of ``word`` and its vectors (and the reference words', read in the same pass)."""

    word: str
    sentences: tuple[str, ...]
    occurrences: tuple[Occurrence, ...]
    contextual: np.ndarray  # (occurrences, layers + 1, hidden): mean of the pieces; 0 = embeddings output
    static: np.ndarray  # (occurrences, embedding size): mean of the pieces' input (word-piece) embeddings
    missing: tuple[int, ...]  # sentences in which the word was not found
    truncated: tuple[int, ...]  # sentences cut to the model's maximum length
    references: dict[str, np.ndarray]  # reference word read on its own -> (layers + 1, hidden)

    @property
    def num_layers(self) -> int:
        layers: int = self.contextual.shape[1] - 1
        return layers


def embed_word(
    bundle: AnyBundle,
    sentences: Sequence[str],
    word: str,
    max_length: int = 512,
    progress: Progress | None = None,
    chunk_sentences: int = 32,
    references: Sequence[str] = (),
) -> WordVectors:
    """Find ``word`` in every sentence and read its vectors from one padded, batched forward pass.

    Each reference word is read on its own, as seed 004 reads "snake", in the same pass; reference
    words the tokenizer drops entirely (nothing left to read) are left out.
    """
    texts = [*sentences, *references]
    encodings = [encode(bundle.tokenizer, text, max_length=max_length) for text in texts]
    normalize = normalizer_of(bundle.tokenizer)
    splits = bundle.description.tokenizer.kind == "WordPiece"  # BERT's pre-tokenizer splits off punctuation
    found = [find_word(e, s, word, normalize, splits) for e, s in zip(encodings, sentences)]
    found += [find_word(e, r, r, normalize, splits)[:1] for e, r in zip(encodings[len(sentences) :], references)]
    vectors = batched_piece_means(bundle, encodings, [[p for *_, p in f] for f in found], progress, chunk_sentences)
    occurrences = tuple(
        Occurrence(i, start, end, positions, tuple(encodings[i].tokens[p] for p in positions))
        for i, spans in enumerate(found[: len(sentences)])
        for start, end, positions in spans
    )
    table = cast("torch.Tensor", bundle.model.get_input_embeddings().weight)  # ALBERT's, ELECTRA's: narrower
    static = [
        table[[encodings[o.sentence_index].input_ids[p] for p in o.positions]].mean(dim=0).float().cpu().numpy()
        for o in occurrences
    ]
    caps = bundle.capabilities
    return WordVectors(
        word=word.strip(),
        sentences=tuple(sentences),
        occurrences=occurrences,
        contextual=(
            np.concatenate(vectors[: len(sentences)])
            if occurrences
            else np.zeros((0, caps.num_layers + 1, caps.hidden_size), dtype=np.float32)
        ),
        static=np.stack(static) if static else np.zeros((0, bundle.description.embedding_size), dtype=np.float32),
        missing=tuple(i for i, f in enumerate(found[: len(sentences)]) if not f),
        truncated=tuple(i for i, e in enumerate(encodings[: len(sentences)]) if e.truncated),
        references={r: v[0] for r, v in zip(references, vectors[len(sentences) :]) if len(v)},
    )


# ---------------------------------------------------------------- layer choice


def layer_options(num_layers: int) -> list[str]:
    """ "0" (embeddings output) … str(num_layers), then "lastK" = mean of the last K hidden states."""
    return [str(i) for i in range(num_layers + 1)] + [f"last{k}" for k in LAST_K_CHOICES if k <= num_layers]


def layer_option_name(option: str) -> str:
    """How a layer option reads on screen and in a table: "7", or "mean of the last 4" for ``last4``."""
    return f"mean of the last {option[4:]}" if option.startswith("last") else option


def layer_range(option: str, num_layers: int) -> range:
    """The hidden states whose mean an option stands for; ValueError for an unknown option."""
    if option not in layer_options(num_layers):
        raise ValueError(f"unknown layer option {option!r}")
    if option.startswith("last"):
        return range(num_layers + 1 - int(option[4:]), num_layers + 1)
    return range(int(option), int(option) + 1)


def layer_label(option: str, num_layers: int) -> str:
    layers = layer_range(option, num_layers)
    if len(layers) > 1:
        return (
            f"mean of the last {len(layers)} hidden states ({layers[0]}–{layers[-1]}, after encoder layers "
            f"{layers[0] - 1}–{layers[-1] - 1})"
        )
    return hidden_state_label(layers[0])


def at_layer(contextual: np.ndarray, option: str) -> np.ndarray:
    """(occurrences, hidden): the vectors for a layer option."""
    vectors: np.ndarray = contextual[:, list(layer_range(option, contextual.shape[1] - 1))].mean(axis=1)
    return vectors


# ---------------------------------------------------------------- what the vectors show


# Kruskal's (1964) reading of stress-1: how far the map's distances are from the cosine distances.
STRESS_VERDICTS = ((0.025, "excellent"), (0.05, "good"), (0.1, "fair"), (0.2, "poor"))


@dataclass(frozen=True)
class Projection:
    coords: np.ndarray  # (points, 2 or 3)
    explained: tuple[float, ...] | None  # PCA's explained variance ratio per axis; None for MDS
    stress: float | None = None  # MDS: Kruskal's stress-1 of the map against the cosine distances; None for PCA
    same_spots: tuple[tuple[int, ...], ...] = ()  # points (from 1) drawn on one spot: ``coinciding`` of the vectors


def coinciding(vectors: np.ndarray) -> list[tuple[int, ...]]:
    """Groups of rows (numbered from 1) whose vectors are the same, to 6 significant digits of the largest value:
    drawn on one spot in any map. At hidden state 0 a word's vector is its embedding plus its position's, so the
    same word at the same position in different sentences is one point."""
    if len(vectors) < 2:
        return []
    scale = float(np.abs(vectors).max()) or 1.0
    _, group = np.unique(np.round(vectors / scale, 6), axis=0, return_inverse=True)
    groups = [tuple(int(i) + 1 for i in np.flatnonzero(group.ravel() == g)) for g in np.unique(group)]
    return sorted(g for g in groups if len(g) > 1)


def stress_verdict(stress: float) -> str:
    """Kruskal's rule of thumb for stress-1: excellent ≤ 0.025, good ≤ 0.05, fair ≤ 0.1, poor ≤ 0.2, else bad."""
    return next((verdict for bound, verdict in STRESS_VERDICTS if stress <= bound), "bad")


def project(vectors: np.ndarray, method: str = PROJECTIONS[0], fitted_rows: int | None = None) -> Projection:
    """PCA in 2D or 3D, or metric MDS on cosine distances (fixed random_state, so reproducible).

    PCA's axes are fitted on the first ``fitted_rows`` vectors (all by default) and every vector is placed on them:
    a point added after them (the student's own sentence) lands on the others' map instead of moving it (adding a
    point can even flip an axis). Too few of them to span every axis: fitted on all. MDS has no such placing: it
    spreads every point at once.

    MDS only approximates the distances; its ``stress`` is Kruskal's stress-1,
    sqrt(Σ (cosine distance − map distance)² / Σ map distance²) over all pairs (scikit-learn's
    ``normalized_stress=True``): 0 = the map keeps every distance exactly.
    """
    same = tuple(coinciding(vectors))  # found once with the map (cached with it), not on every visit
    if method == "MDS 2D":
        distances = cosine_distances(vectors)
        if not distances.any():  # all points identical: nothing to spread out, and nothing lost
            return Projection(np.zeros((len(vectors), 2)), None, stress=0.0, same_spots=same)
        mds = MDS(n_components=2, metric="precomputed", init="classical_mds", random_state=0, normalized_stress=True)
        coords = mds.fit_transform(distances)
        return Projection(coords, None, stress=float(mds.stress_), same_spots=same)
    if method not in PROJECTIONS:
        raise ValueError(f"unknown projection {method!r}")
    # The exact solver: for wide vectors (768) sklearn's default picks a randomized one, whose digits change from
    # run to run (another replica, a restart).
    pca = PCA(n_components=3 if method == "PCA 3D" else 2, svd_solver="full")
    with np.errstate(invalid="ignore", divide="ignore"):  # identical points: no variance to explain
        # Fitted rows fix the axes only when they can span them all (more points than axes, spread on each):
        # two points span one direction, and the star would be flattened onto it with them.
        spans = fitted_rows is not None and fitted_rows > pca.n_components
        if spans:
            spans = bool(np.all(np.nan_to_num(pca.fit(vectors[:fitted_rows]).explained_variance_ratio_) >= NO_SPREAD))
        if not spans:
            pca.fit(vectors)
        coords = pca.transform(vectors)
    explained = np.nan_to_num(pca.explained_variance_ratio_)
    # An axis with no spread (two points span one direction) holds only rounding noise, which a chart would stretch
    # over its whole height: it is drawn flat.
    coords[:, explained < NO_SPREAD] = 0.0
    return Projection(coords, tuple(float(r) for r in explained), same_spots=same)


def separation(vectors: np.ndarray, labels: Sequence[str]) -> float | None:
    """Silhouette of the labels on cosine distance (−1…1; higher = senses apart), over labelled points.

    None when it is undefined: fewer than two senses, or as many senses as labelled points.
    """
    keep = [i for i, label in enumerate(labels) if label]
    kept = [labels[i] for i in keep]
    if not 2 <= len(set(kept)) <= len(kept) - 1:
        return None
    return float(silhouette_score(vectors[keep], kept, metric="cosine"))


def separation_by_layer(contextual: np.ndarray, labels: Sequence[str]) -> list[float | None]:
    return [separation(contextual[:, layer], labels) for layer in range(contextual.shape[1])]


def separation_by_option(contextual: np.ndarray, labels: Sequence[str]) -> dict[str, float | None]:
    """The silhouette at every layer option (``layer_options``): each hidden state, then each mean of the last k
    hidden states (seed 001's exercise)."""
    return {
        option: separation(at_layer(contextual, option), labels) for option in layer_options(contextual.shape[1] - 1)
    }


def nearest_neighbours(vectors: np.ndarray, k: int = 3) -> list[list[tuple[int, float]]]:
    """For each point, its ``k`` most cosine-similar other points as (index, similarity)."""
    sims = cosine_similarity(vectors)
    np.fill_diagonal(sims, -np.inf)
    order = np.argsort(-sims, axis=1, kind="stable")[:, : min(k, len(vectors) - 1)]
    return [[(int(j), float(sims[i, j])) for j in row] for i, row in enumerate(order)]


def same_spelling(words: WordVectors) -> np.ndarray:
    """(occurrences, occurrences): True where two occurrences have the same word pieces.

    On an uncased model every occurrence has the same pieces; on a cased one "Field" and "field" are
    different tokens with different static vectors, so comparing them would show capitalisation, not context.
    """
    pieces = [o.pieces for o in words.occurrences]
    return np.array([[a == b for b in pieces] for a in pieces], dtype=bool).reshape(len(pieces), len(pieces))


def spellings(words: WordVectors) -> list[tuple[str, ...]]:
    """The distinct word pieces the occurrences have, most frequent first."""
    counts = Counter(o.pieces for o in words.occurrences)
    return [pieces for pieces, _ in counts.most_common()]


def compared_pairs(words: WordVectors, compared: Sequence[bool] | None = None) -> np.ndarray:
    """Which pairs of occurrences are compared (upper triangle): distinct, with the same pieces (like with like), and
    both among ``compared`` (all by default; the student's own sentence has no sense to compare)."""
    counted = np.ones(len(words.occurrences), dtype=bool) if compared is None else np.asarray(compared, dtype=bool)
    return np.triu(same_spelling(words) & np.outer(counted, counted), k=1)


def like_pairs(words: WordVectors, vectors: np.ndarray, compared: Sequence[bool] | None = None) -> np.ndarray:
    """Cosine similarity of every pair ``compared_pairs`` compares."""
    sims = cosine_similarity(vectors) if len(vectors) else np.zeros((0, 0))
    pairs: np.ndarray = sims[compared_pairs(words, compared)]
    return pairs


def static_vs_contextual(
    words: WordVectors, labels: Sequence[str], compared: Sequence[bool] | None = None
) -> list[dict[str, str | float | None]]:
    """Mean pairwise cosine among occurrences — same sense, different senses, all — for the static
    input embedding (what word2vec would give: one vector per word) and every hidden state.

    Only pairs with the same word pieces count (``same_spelling``): on a cased model, "Field" and
    "field" are never compared, so the panel shows context, not capitalisation. ``compared``: which occurrences
    count at all (``compared_pairs``); the student's own sentence, with no sense, in "all pairs" only, made it
    larger than both its parts.
    """
    same = np.array([[a == b and bool(a) for b in labels] for a in labels], dtype=bool)
    differ = np.array([[a != b and bool(a) and bool(b) for b in labels] for a in labels], dtype=bool)
    upper = compared_pairs(words, compared)

    def row(name: str, vectors: np.ndarray) -> dict[str, str | float | None]:
        sims = cosine_similarity(vectors)

        def pick(where: np.ndarray) -> float | None:
            return float(sims[where & upper].mean()) if (where & upper).any() else None

        return {"vectors": name, "same sense": pick(same), "different senses": pick(differ), "all pairs": pick(upper)}

    rows = [row("static (input word-piece embedding)", words.static)]
    for layer in range(words.num_layers + 1):
        rows.append(row(layer_label(str(layer), words.num_layers), words.contextual[:, layer]))
    return rows
