"""Word senses core: parsing, finding the word, the batched pass, layers, projections, separation."""

import re

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr
from sklearn.decomposition import PCA
from sklearn.metrics import silhouette_score
from sklearn.metrics.pairwise import cosine_distances, cosine_similarity, euclidean_distances
from transformers import AutoTokenizer

from bertlens.analysis import encode, model_engine, normalizer_of
from bertlens.models import bundled_model_path, load_model
from bertlens.sense_presets import PRESETS
from bertlens.senses import (
    LabelledSentence,
    SenseInputError,
    SentenceVectorCache,
    at_layer,
    coinciding,
    drawn_at_random,
    embed_word,
    find_word,
    layer_label,
    layer_options,
    layer_range,
    like_pairs,
    nearest_neighbours,
    parse_coarsewsd,
    parse_csv,
    parse_lines,
    project,
    read_sentence_files,
    same_spelling,
    sentence_vector_cache,
    separation,
    separation_by_layer,
    static_vs_contextual,
    stress_verdict,
    uploaded_word,
    word_problem,
)
from bertlens.synthetic import TINY_CONFIG, random_bert_config, save_random_bert
from bertlens.table_input import TableInputError

FIELD = PRESETS["field"]
FIELD_SENTENCES = [s.sentence for s in FIELD.sentences]
FIELD_LABELS = [s.sense for s in FIELD.sentences]


def model_vectors(bundle, sentences, word):
    """Reference: each sentence alone through bundle.model.bert; the word found by its token ids.
    Returns (sentences, layers + 1, hidden): the mean of the word's pieces at every hidden state."""
    ids = bundle.tokenizer(word, add_special_tokens=False)["input_ids"]
    rows = []
    for sentence in sentences:
        enc = bundle.tokenizer(sentence, return_tensors="pt")
        row = enc["input_ids"][0].tolist()
        start = next(i for i in range(len(row)) if row[i : i + len(ids)] == ids)
        with torch.no_grad():
            out = bundle.model.bert(**enc, output_hidden_states=True)
        rows.append(torch.stack(out.hidden_states)[:, 0, start : start + len(ids)].mean(1).numpy())
    return np.stack(rows)


def assert_equal_up_to_sign(ours, ref, atol):
    for j in range(ref.shape[1]):
        sign = np.sign(ours[:, j] @ ref[:, j])
        np.testing.assert_allclose(sign * ours[:, j], ref[:, j], atol=atol)


@pytest.fixture(scope="module")
def field_words(bundled):
    return embed_word(bundled, FIELD_SENTENCES, "field")


@pytest.fixture(scope="module")
def field_reference(bundled):
    return model_vectors(bundled, FIELD_SENTENCES, "field")


# ---------------------------------------------------------------- real weights


def test_field_senses_separate_better_at_the_last_layer_than_at_layer_1(bundled, field_words, field_reference):
    scores = separation_by_layer(field_words.contextual, FIELD_LABELS)
    assert len(scores) == bundled.capabilities.num_layers + 1
    assert scores[-1] > scores[1]
    # The score is sklearn's silhouette on cosine distance of the model's own vectors.
    for layer in (1, -1):
        reference = silhouette_score(field_reference[:, layer], FIELD_LABELS, metric="cosine")
        assert scores[layer] == pytest.approx(reference, abs=1e-4)


def test_plotted_coordinates_are_pca_of_the_models_hidden_states(field_words, field_reference):
    ref = PCA(n_components=2).fit(field_reference[:, -1])
    ours = project(at_layer(field_words.contextual, "6"))
    assert_equal_up_to_sign(ours.coords, ref.transform(field_reference[:, -1]), 1e-4)
    np.testing.assert_allclose(ours.explained, ref.explained_variance_ratio_, atol=1e-5)
    # Mean of the last four layers (seed 001: hidden_states[-4:]), in 3D.
    mean4 = field_reference[:, -4:].mean(axis=1)
    assert_equal_up_to_sign(
        project(at_layer(field_words.contextual, "last4"), "PCA 3D").coords, PCA(3).fit_transform(mean4), 1e-4
    )


def test_a_point_after_the_fitted_rows_is_placed_on_their_axes(field_words, field_reference):
    vectors = at_layer(field_words.contextual, "6")
    ref = PCA(n_components=2).fit(field_reference[:-1, -1])
    ours = project(vectors, fitted_rows=len(vectors) - 1)
    assert_equal_up_to_sign(ours.coords, ref.transform(field_reference[:, -1]), 1e-4)
    np.testing.assert_allclose(ours.explained, ref.explained_variance_ratio_, atol=1e-5)
    # Too few rows to span the axes (review: two listed points and the star were flattened onto one line), or rows
    # without spread: every row is fitted, as without fitted_rows.
    for method, rows in (("PCA 2D", 2), ("PCA 3D", 3)):
        np.testing.assert_allclose(project(vectors, method, fitted_rows=rows).coords, project(vectors, method).coords)
    same = np.vstack([np.repeat(vectors[:1], 4, axis=0), vectors[1:3]])
    np.testing.assert_allclose(project(same, fitted_rows=4).coords, project(same).coords)


@pytest.mark.parametrize("method", ["PCA 2D", "PCA 3D"])
def test_a_wide_models_map_is_exact_and_the_same_every_time(method):
    """bert-base's 768-wide vectors: sklearn's default solver is then randomized, and the digits of the map (and its
    CSV) changed from run to run. The exact solver's coordinates are the centred data's SVD, up to sign."""
    vectors = np.random.default_rng(7).normal(size=(40, 768)).astype(np.float32)
    first, second = project(vectors, method), project(vectors, method)
    assert np.array_equal(first.coords, second.coords)
    centred = vectors.astype(np.float64) - vectors.astype(np.float64).mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    k = first.coords.shape[1]
    assert_equal_up_to_sign(first.coords, u[:, :k] * s[:k], 1e-3)  # float32 data, coordinates of size ~10
    np.testing.assert_allclose(first.explained, (s[:k] ** 2 / (s**2).sum()), atol=1e-6)


def test_batched_pass_equals_one_sentence_at_a_time(bundled, field_words, field_reference):
    np.testing.assert_allclose(field_words.contextual, field_reference, atol=1e-5)  # one padded batch of 8
    long = "Field, " + "after a long walk we came to a wide green field " * 6
    sentences = [FIELD_SENTENCES[2], long, FIELD_SENTENCES[7]]
    chunked = embed_word(bundled, sentences, "field", chunk_sentences=2)
    alone = []
    for s in sentences:
        sentence_vector_cache(bundled).clear()  # each sentence really read alone
        alone.append(embed_word(bundled, [s], "field").contextual)
    alone = np.concatenate(alone)
    assert len(chunked.occurrences) == 9  # every occurrence is a point
    np.testing.assert_allclose(chunked.contextual, alone, atol=1e-5)


def test_progress_reports_every_chunk(tiny_bundle):
    sentence_vector_cache(tiny_bundle).clear()
    calls = []
    embed_word(
        tiny_bundle,
        [f"The field number {i}." for i in range(7)],
        "field",
        progress=lambda *a: calls.append(a),
        chunk_sentences=3,
    )
    assert calls == [(3, 7), (6, 7), (7, 7)]


def test_a_new_sentence_beside_read_ones_costs_one_sentence_pass(tiny_bundle):
    """A student's sentence beside the preset's: only it goes through the model; the rest is remembered."""
    cache, engine = sentence_vector_cache(tiny_bundle), model_engine(tiny_bundle)
    cache.clear()
    presets = [f"A field of study, number {i}." for i in range(6)]
    embed_word(tiny_bundle, presets, "field", chunk_sentences=2)
    before, calls = engine.executions, []
    mine = embed_word(tiny_bundle, [*presets, "My own field is green."], "field", progress=lambda *a: calls.append(a))
    assert engine.executions - before == 1 and calls == [(7, 7)]  # one pass, of the new sentence
    cache.clear()
    fresh = embed_word(tiny_bundle, [*presets, "My own field is green."], "field")
    np.testing.assert_allclose(mine.contextual, fresh.contextual, atol=1e-5)


def test_sentence_cache_is_bounded_in_bytes():
    cache = SentenceVectorCache(max_bytes=1000)
    for i in range(10):
        cache.put(i, np.zeros(100, dtype=np.float32))  # 400 bytes each
    assert cache.nbytes <= 1000 and cache.get(9) is not None and cache.get(0) is None


@pytest.mark.parametrize(
    ("sentence", "word", "pieces"),
    [
        ("At the store, I bought fresh strawberries.", "strawberries", ("straw", "##berries")),
        ("Sinan loves a beautiful day", "sinan", ("sin", "##an")),
    ],
)
def test_multi_piece_word_is_the_mean_of_its_pieces(bundled, sentence, word, pieces):
    words = embed_word(bundled, [sentence], word)
    (occurrence,) = words.occurrences
    assert occurrence.pieces == pieces
    np.testing.assert_allclose(words.contextual[0], model_vectors(bundled, [sentence], word.lower())[0], atol=1e-5)
    table = bundled.model.bert.embeddings.word_embeddings.weight
    ids = bundled.tokenizer.convert_tokens_to_ids(list(pieces))
    np.testing.assert_allclose(words.static[0], table[ids].mean(0).numpy(), atol=1e-7)


def test_static_embedding_is_identical_in_every_sentence_contextual_is_not(bundled, field_words):
    table = bundled.model.bert.embeddings.word_embeddings.weight
    np.testing.assert_array_equal(field_words.static, np.tile(table[2492].numpy(), (8, 1)))  # "field" is id 2492
    rows = static_vs_contextual(field_words, FIELD_LABELS)
    assert rows[0]["all pairs"] == pytest.approx(1.0) and rows[0]["different senses"] == pytest.approx(1.0)
    sims = cosine_similarity(field_words.contextual[:, -1])
    assert rows[-1]["all pairs"] == pytest.approx(sims[np.triu_indices(8, 1)].mean(), abs=1e-6)
    assert rows[-1]["all pairs"] < 0.9


def test_reference_words_are_read_alone_like_seed_004(bundled):
    words = embed_word(bundled, FIELD_SENTENCES[:2], "field", references=["snake", "programming", "\u200b"])
    refs = words.references  # read in the sentences' own batch
    assert set(refs) == {"snake", "programming"}  # a word with nothing to tokenize is left out
    assert len(words.occurrences) == 2 and words.missing == ()
    for word, vectors in refs.items():
        ids = bundled.tokenizer.encode(word)
        with torch.no_grad():
            out = bundled.model.bert(torch.tensor([ids]), output_hidden_states=True)
        np.testing.assert_allclose(vectors[-1], out.last_hidden_state[0, 1].numpy(), atol=1e-5)


# ---------------------------------------------------------------- finding the word


def test_word_is_found_case_insensitively_as_a_whole_word_only(tiny_bundle):
    sentence = "Field hockey: the fields near the midfield, and a field."
    found = find_word(encode(tiny_bundle.tokenizer, sentence), sentence, "FIELD")
    assert [sentence[a:b] for a, b, _ in found] == ["Field", "field"]
    assert found[1][0] == sentence.rindex("field")


DECOMPOSED = "cafe\u0301"  # café with its accent typed apart (a combining accent)


@pytest.mark.parametrize(
    ("sentence", "word", "found"),
    [
        (f"The {DECOMPOSED} is open; the café too, and CAFE.", "café", [DECOMPOSED, "café", "CAFE"]),
        (f"The café is open, the {DECOMPOSED} too.", DECOMPOSED, ["café", DECOMPOSED]),
        ("Hello wor\u200bld and world.", "world", ["wor\u200bld", "world"]),  # a zero-width space inside
        ("मैं स्कूल जाता हूँ और मैं", "मैं", ["मैं", "मैं"]),  # Hindi: vowel signs the uncased tokenizer strips
        ("我喜欢学习。", "学", ["学"]),  # each Chinese character a word of its own
    ],
)
def test_a_word_is_found_as_the_tokenizer_reads_it(bundled, sentence, word, found):
    """Word senses said "café" (its accent typed apart), a word with a zero-width space, or Hindi मैं was "not
    found" in sentences that plainly had it (an audit): the model reads each as the word typed."""
    spans = find_word(encode(bundled.tokenizer, sentence), sentence, word, normalizer_of(bundled.tokenizer))
    assert [sentence[a:b] for a, b, _ in spans] == found  # each span whole, its trailing marks included
    tokens = encode(bundled.tokenizer, sentence).tokens
    assert all([tokens[p] for p in positions] == bundled.tokenizer.tokenize(word) for *_, positions in spans)


def test_missing_and_truncated_sentences_are_reported(tiny_bundle):
    sentences = ["The field is green.", "No such word here.", "word " * 30 + "field"]
    words = embed_word(tiny_bundle, sentences, "field", max_length=16)
    assert words.missing == (1, 2) and words.truncated == (2,)
    assert [o.sentence_index for o in words.occurrences] == [0]


# ---------------------------------------------------------------- layers, projections, neighbours


def test_layer_options_and_ranges():
    assert layer_options(2) == ["0", "1", "2", "last2"]
    assert layer_options(12)[-3:] == ["last2", "last3", "last4"]
    assert layer_range("last4", 12) == range(9, 13)  # seed 001: hidden_states[-4:]
    assert layer_label("0", 6) == "hidden state 0 (embeddings output)"
    with pytest.raises(ValueError):
        layer_range("99", 6)
    contextual = np.arange(2 * 7 * 3, dtype=float).reshape(2, 7, 3)
    np.testing.assert_allclose(at_layer(contextual, "last2"), contextual[:, 5:7].mean(axis=1))


def test_mds_is_reproducible_and_keeps_cosine_order(field_words):
    vectors = at_layer(field_words.contextual, "6")
    first, second = project(vectors, "MDS 2D"), project(vectors, "MDS 2D")
    assert first.coords.shape == (8, 2) and first.explained is None
    np.testing.assert_array_equal(first.coords, second.coords)
    # The map's distances follow the cosine distances (rank correlation of all pairs).
    pairs = np.triu_indices(8, 1)
    assert spearmanr(cosine_distances(vectors)[pairs], euclidean_distances(first.coords)[pairs]).statistic > 0.8
    np.testing.assert_array_equal(project(np.ones((3, 4)), "MDS 2D").coords, np.zeros((3, 2)))  # identical points
    assert project(np.ones((3, 4))).explained == (0.0, 0.0)


def test_mds_reports_kruskal_stress(field_words):
    vectors = at_layer(field_words.contextual, "6")
    mds = project(vectors, "MDS 2D")
    pairs = np.triu_indices(8, 1)
    wanted, drawn = cosine_distances(vectors)[pairs], euclidean_distances(mds.coords)[pairs]
    assert mds.stress == pytest.approx(np.sqrt(((wanted - drawn) ** 2).sum() / (drawn**2).sum()), rel=1e-9)
    assert 0 < mds.stress < 1  # an approximation: 8 points in 384 dimensions do not fit 2D exactly
    assert project(vectors).stress is None and project(np.ones((3, 4)), "MDS 2D").stress == 0.0
    verdicts = [stress_verdict(s) for s in (0.0, 0.025, 0.04, 0.1, 0.15, 0.3)]
    assert verdicts == ["excellent", "excellent", "good", "fair", "poor", "bad"]


@pytest.fixture(scope="module")
def cased_bundle(tmp_path_factory):
    """A tiny random BERT whose tokenizer keeps capitals: "Field" and "field" are different tokens."""
    folder = save_random_bert(tmp_path_factory.mktemp("tiny-cased-senses"), random_bert_config(**TINY_CONFIG))
    AutoTokenizer.from_pretrained(bundled_model_path(), do_lower_case=False).save_pretrained(folder)
    return load_model(str(folder))


def test_static_vs_contextual_compares_like_with_like_on_a_cased_model(cased_bundle):
    sentences = ["Field hockey is fun.", "The field is green.", "A field of wheat.", "Field work in the rain."]
    words = embed_word(cased_bundle, sentences, "field")
    assert [o.pieces for o in words.occurrences] == [("[UNK]",), ("field",), ("field",), ("[UNK]",)]
    np.testing.assert_array_equal(same_spelling(words)[0], [True, False, False, True])
    rows = static_vs_contextual(words, ["sport", "land", "land", "work"])
    # Only Field–Field and field–field pairs: the static vectors are identical, whatever the capitals.
    assert rows[0]["all pairs"] == pytest.approx(1.0) and rows[0]["same sense"] == pytest.approx(1.0)
    assert rows[0]["different senses"] == pytest.approx(1.0)  # "Field hockey" vs "Field work"
    sims = cosine_similarity(words.contextual[:, -1])
    assert rows[-1]["all pairs"] == pytest.approx((sims[0, 3] + sims[1, 2]) / 2, abs=1e-6)


def test_static_vs_contextual_leaves_unlabelled_sentences_out_of_the_sense_means(tiny_bundle):
    """Two unlabelled sentences are not "the same sense": counting them would put a pair of unknown senses into the
    "same sense" mean the panel shows. Reference: sklearn's cosine of the model's own vectors, pairs picked by hand."""
    sentences = FIELD_SENTENCES[:6]
    labels = ["pitch", "", "pitch", "crop", "", "crop"]
    words = embed_word(tiny_bundle, sentences, "field")
    assert len(words.occurrences) == 6
    reference = model_vectors(tiny_bundle, sentences, "field")
    same, different = [(0, 2), (3, 5)], [(0, 3), (0, 5), (2, 3), (2, 5)]
    rows = static_vs_contextual(words, labels)
    assert len(rows) == 1 + reference.shape[1]
    for state, row in enumerate(rows[1:]):
        sims = cosine_similarity(reference[:, state])
        assert row["same sense"] == pytest.approx(np.mean([sims[i, j] for i, j in same]), abs=1e-5), state
        assert row["different senses"] == pytest.approx(np.mean([sims[i, j] for i, j in different]), abs=1e-5)
        assert row["all pairs"] == pytest.approx(sims[np.triu_indices(6, 1)].mean(), abs=1e-5)
    # Unlabelled pairs left out, the unlabelled sentences are not the same sense as each other either.
    assert all(row["same sense"] != pytest.approx(row["all pairs"], abs=1e-6) for row in rows[1:])


def test_like_with_like_pairs_are_every_distinct_pair_never_a_point_with_itself(tiny_bundle):
    """A point with itself has cosine 1.0: counted, it would pull the like-with-like histogram towards 1."""
    sentences = FIELD_SENTENCES[:5]
    words = embed_word(tiny_bundle, sentences, "field")  # uncased: every occurrence has the same pieces
    reference = model_vectors(tiny_bundle, sentences, "field")[:, -1]
    pairs = like_pairs(words, words.contextual[:, -1])
    assert pairs.shape == (10,)  # 5 points: 5 · 4 / 2 distinct pairs
    np.testing.assert_allclose(pairs, cosine_similarity(reference)[np.triu_indices(5, 1)], atol=1e-5)


def test_nearest_neighbours_never_list_the_point_itself():
    """With 3 points and k = 3 each point has only 2 others; the point itself must not fill the third place."""
    vectors = np.random.default_rng(3).normal(size=(3, 5))
    sims = cosine_similarity(vectors)
    for i, near in enumerate(nearest_neighbours(vectors, k=3)):
        others = sorted((j for j in range(3) if j != i), key=lambda j: -sims[i, j])
        assert [j for j, _ in near] == others
        np.testing.assert_allclose([s for _, s in near], [sims[i, j] for j in others])


def test_nearest_neighbours_match_brute_force():
    vectors = np.random.default_rng(0).normal(size=(6, 5))
    sims = cosine_similarity(vectors)
    for i, near in enumerate(nearest_neighbours(vectors, k=2)):
        others = sorted((j for j in range(6) if j != i), key=lambda j: -sims[i, j])
        assert [j for j, _ in near] == others[:2]
        assert near[0][1] == pytest.approx(sims[i, others[0]])


def test_separation_is_undefined_without_two_senses():
    vectors = np.random.default_rng(0).normal(size=(4, 5))
    assert separation(vectors, ["a", "a", "a", "a"]) is None
    assert separation(vectors, ["a", "b", "", ""]) is None  # unlabelled points are left out
    assert separation(vectors, ["a", "a", "b", "b"]) == pytest.approx(
        silhouette_score(vectors, list("aabb"), metric="cosine")
    )


# ---------------------------------------------------------------- input


def test_parse_lines():
    items = parse_lines("I love my pet python | snake\n\n  I love coding in python|code  \nNo label here\n")
    assert items == [
        LabelledSentence("I love my pet python", "snake"),
        LabelledSentence("I love coding in python", "code"),
        LabelledSentence("No label here", ""),
    ]
    with pytest.raises(SenseInputError, match="Line 2 has more than one"):
        parse_lines("ok | a\na | b | c")
    with pytest.raises(SenseInputError, match="Line 1 has a sense label but no sentence"):
        parse_lines(" | lonely label")
    assert parse_lines("\u200b\u200b\nA bank.\n\u00ad") == [LabelledSentence("A bank.", "")]  # lines that show nothing
    with pytest.raises(SenseInputError, match="Line 1 has a sense label but no sentence"):
        parse_lines("\u200b | money")


def test_parse_csv():
    data = '\ufeffSentence,Sense\n"Yes, the bank is open.",money\nThe river bank.,river\n\n'.encode()
    assert parse_csv(data) == [
        LabelledSentence("Yes, the bank is open.", "money"),
        LabelledSentence("The river bank.", "river"),
    ]
    assert parse_csv("sentence\nA field.\n") == [LabelledSentence("A field.", "")]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"text,label\na,b\n", "`sentence` column"),
        (b"sentence,sense\n", "no sentences"),
        (b"sentence,sense\na,b,c\n", "row 2 has 3 cells"),
        (b"sentence,sense\n,b\n", "row 2 has no sentence"),
        ("sentence,sense\n\u200b,b\n".encode(), "row 2 has no sentence"),
        ("sentence\ncaf\u00e9\n".encode("latin-1"), "not UTF-8"),
        (b'sentence\n"unclosed\n', "cannot be read"),
    ],
)
def test_parse_csv_errors(data, message):
    with pytest.raises(TableInputError, match=message):
        parse_csv(data)


def test_word_problem():
    assert word_problem("  ") and word_problem("x" * 51)
    assert word_problem("field") is None


def test_presets_are_balanced_and_every_sentence_has_the_word(bundled):
    assert FIELD.sentences[0] == LabelledSentence("Zinedine Zidane is the greatest on the field.", "Football Pitch")
    assert len(FIELD.sentences) == 8 and len(set(FIELD_LABELS)) == 5
    assert PRESETS["python"].references == ("snake", "programming")
    for name, preset in PRESETS.items():
        senses = [s.sense for s in preset.sentences]
        if name != "field":
            assert len(senses) >= 8 and len({senses.count(s) for s in senses}) == 1, name
        for s in preset.sentences:
            assert find_word(encode(bundled.tokenizer, s.sentence), s.sentence, preset.word), s


def test_coinciding_groups_rows_with_the_same_vector():
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(3, 8))
    vectors = np.stack([a, b, a, c, b + 1e-9, a, c + 1e-3])
    assert coinciding(vectors) == [(1, 3, 6), (2, 5)]  # 1e-3 apart is another point, 1e-9 is the same
    assert coinciding(vectors[:1]) == [] and coinciding(np.stack([a, b])) == []


def test_points_a_hundred_thousandth_apart_are_not_one_spot():
    """Six significant digits of the largest value: 0.50001 and 0.5 (largest value 1) are two points; only a
    difference below the sixth digit is one spot."""
    a = np.array([1.0, 0.5, -0.25, 0.125])
    assert coinciding(np.stack([a, a + [0, 1e-5, 0, 0]])) == []
    assert coinciding(np.stack([a, a + [0, 0, -2e-5, 0], a])) == [(1, 3)]
    assert coinciding(np.stack([a, a + [0, 1e-8, 0, 0]])) == [(1, 2)]


COARSE_DATA = b"3\tI ate an apple today.\n0\tApple released a phone.\n\n3\tShe peeled the apple slowly.\n"
COARSE_GOLD = b"1\n0\n1\n"
COARSE_CLASSES = b'{"0": "apple_inc", "1": "apple_fruit"}'


def test_a_draw_at_random_is_the_same_every_time_in_the_files_order():
    items = [LabelledSentence(f"Sentence {n} about an apple.", "fruit" if n < 300 else "company") for n in range(600)]
    drawn = drawn_at_random(items, 200)
    assert len(drawn) == len(set(drawn)) == 200 and drawn == drawn_at_random(items, 200)
    assert [items.index(item) for item in drawn] == sorted(items.index(item) for item in drawn)
    assert 70 < sum(item.sense == "fruit" for item in drawn) < 130  # from the whole file: both senses, as many
    assert drawn_at_random(items[:150], 200) == tuple(items[:150])  # within the budget: all of them


def test_coarsewsd_files_as_seed_001_reads_them():
    """CoarseWSD-20's data file (word position, tab, sentence), gold file (sense numbers) and classes map."""
    named = parse_coarsewsd(COARSE_DATA, COARSE_GOLD, COARSE_CLASSES)
    assert named == [
        LabelledSentence("I ate an apple today.", "apple_fruit"),
        LabelledSentence("Apple released a phone.", "apple_inc"),
        LabelledSentence("She peeled the apple slowly.", "apple_fruit"),
    ]
    assert [item.sense for item in parse_coarsewsd(COARSE_DATA, COARSE_GOLD)] == ["1", "0", "1"]  # no names: numbers
    files = {"train.data.txt": COARSE_DATA, "TRAIN.gold.txt": COARSE_GOLD, "classes_map.txt": COARSE_CLASSES}
    assert read_sentence_files(files) == named
    assert read_sentence_files({"mine.CSV": b"sentence\nAn apple.\n"}) == [LabelledSentence("An apple.", "")]


def test_the_word_coarsewsd_files_are_about_is_read_from_their_word_positions():
    """Seed 001 names the word itself (``focal_word``); the files name it only in their folder's name. A position
    counts the sentence's words from 0; one past the end, or a rarer word, does not decide."""
    data = b"1\tThe Bank.\n9\tPast the end.\n1\tA bank, then.\n1\tA river.\n"
    assert uploaded_word({"x.data.txt": data, "x.gold.txt": b"1\n1\n1\n1\n"}) == "bank"
    assert uploaded_word({"x.data.txt": b"9\tToo short.\n", "x.gold.txt": b"1\n"}) is None
    assert uploaded_word({"mine.csv": b"sentence\nAn apple.\n"}) is None  # a CSV file names no word


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"train.data.txt": b"no tab here\n", "train.gold.txt": b"1\n"}, "Line 1 of the data file"),
        ({"train.data.txt": COARSE_DATA, "train.gold.txt": b"1\nx\n1\n"}, "Line 2 of the gold file"),
        ({"train.data.txt": COARSE_DATA, "train.gold.txt": b"1\n"}, "3 sentences and the gold file 1 label"),
        ({"a.data.txt": COARSE_DATA, "a.gold.txt": COARSE_GOLD, "classes_map.txt": b"[1]"}, "not a JSON object"),
        (
            {"a.data.txt": COARSE_DATA, "a.gold.txt": COARSE_GOLD, "classes_map.txt": b"[" * 100_000},
            "not a JSON object",
        ),
        ({"train.data.txt": COARSE_DATA}, "Choose one CSV file, or CoarseWSD-20's files"),
        ({"a.csv": b"sentence\nx\n", "b.csv": b"sentence\ny\n"}, "Choose one CSV file"),
        ({"train.data.txt": "3\tcaf\u00e9".encode("latin-1"), "train.gold.txt": b"1\n"}, "data file is not UTF-8"),
    ],
)
def test_sentence_files_that_cannot_be_read_say_why(files, message):
    with pytest.raises(TableInputError, match=re.escape(message)):
        read_sentence_files(files)


@pytest.mark.parametrize(("method", "points"), [("PCA 2D", 2), ("PCA 3D", 3)])
def test_an_axis_without_spread_is_drawn_flat(method, points):
    """Two sentences span one direction (three span two): the last axis held only rounding noise (~1e-7), which the
    chart stretched over its height as if the points were far apart. It is 0; the others keep every distance."""
    vectors = np.random.default_rng(3).normal(size=(points, 384)).astype(np.float32)
    projection = project(vectors, method)
    assert np.all(projection.coords[:, -1] == 0.0) and projection.explained[-1] < 1e-6
    assert sum(projection.explained) == pytest.approx(1.0)
    drawn = np.linalg.norm(projection.coords[:, None] - projection.coords[None], axis=-1)
    exact = np.linalg.norm(vectors.astype(np.float64)[:, None] - vectors[None], axis=-1)
    np.testing.assert_allclose(drawn, exact, rtol=1e-5)
