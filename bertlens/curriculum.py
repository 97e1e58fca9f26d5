"""The six lessons: the course notebooks in ``../shared/seeds`` as guided steps over the live pages, and the comparison
of BERT with one of its successors (issue 51).

Each lesson follows one notebook in its order; the texts are ours. Step parameters are URL parameters
declared in ``components.state.params`` (tests check every one against its page). Questions are answered live
(``bertlens.lessons``): nothing here says what the model will answer.

Students read every text here: none names a notebook by its seed number or file name, and each one's lead, what
``bertlens.wording.first_words`` keeps of it (45 words of a step's text, 40 of a callout), reads on its own
(``tests/core/test_student_text.py``).
"""

from __future__ import annotations

from bertlens.attention import ANIMAL_TIRED, ANIMAL_WIDE, CALCULATORS, STATISTIC_BY_KEY, VIEWS
from bertlens.lessons import (
    LAST_ENCODER_LAYER,
    LAST_HIDDEN_STATE,
    MIDDLE_ENCODER_LAYER,
    WIDEST_LAST_K,
    AttendsMore,
    BestSeparation,
    CloserInContext,
    FillMaskTop1,
    LargestPart,
    Lesson,
    LessPadding,
    MaskMatters,
    MoreParameters,
    MoreTokens,
    NextSentenceVerdict,
    PairTask,
    ParameterCount,
    SameFirstGuess,
    Step,
    StrongestHead,
)
from bertlens.nsp import DEFAULT_A, DEFAULT_B
from bertlens.tokenization import SEED_BATCH

# --- misconception callouts ------------------------------------------------------------------------

NOT_NEXT_WORD = (
    "**Misconception: “BERT predicts the next word.”** It does not. BERT fills a *masked* word using the "
    "words on **both** sides of it; the next-word task belongs to left-to-right models such as GPT. Move "
    "the [MASK] to the middle of the sentence and BERT still reads what follows it."
)
NOT_EXPLANATION = (
    "**Misconception: “attention explains the prediction.”** An attention weight says how much one token "
    "mixes in another token's value vector, in one head of one layer: not what the output depends on. Other "
    "heads, the feed-forward layers and the residual stream matter too. The *Mask and see* tab measures "
    "influence by removing tokens instead."
)
SPECIAL_NO_OP = (
    "**A big weight on [SEP] is not a big role for [SEP].** Clark et al. (2019) found that attention to [SEP] "
    "barely changes the output: a “no-op”, where a head parks attention when its pattern does not apply. "
    "In bert-base, many heads of the middle layers send most of their attention to [SEP] (encoder layers 5 to 9 "
    "here, numbered from 0; Clark et al. count them 6 to 10). The Discover BERT notebook calls [CLS] and [SEP] "
    "“summary anchors”; both are readings, not measurements of what the output depends on."
)
SAME_INDEX = (
    "**The same head index in two layers means unrelated heads.** Head 3 of layer 2 and head 3 of layer 5 "
    "share a number, nothing else: each layer has its own weights. A notebook's “look at layer 9” is about "
    "bert-base-uncased; other checkpoints put their patterns elsewhere."
)
STATIC_EMBEDDING = (
    "**A word's input embedding is the same in every sentence.** Before the first layer, a word (“apple”, "
    "“python”) is one row of the embedding matrix wherever it appears: context can only enter through the encoder "
    "layers. The embeddings output (hidden state 0) adds only the position and segment embeddings, then a layer norm."
)

NOT_A_CLASSIFIER = (
    "**An NSP verdict is not a judgement of meaning.** The head learned to tell a real next sentence from a "
    "*random* one, so a B on the same topic often gets IsNext even when it could never follow A. A B on a new "
    "topic is easy to reject. RoBERTa dropped this task and did no worse."
)
PADDING_IS_FREE = (
    "**“Padding is harmless.”** Only with the attention mask. The mask tells every head to give [PAD] "
    "no weight; without it the padding takes part in every token's context like a word."
)

# --- the lessons -------------------------------------------------------------------------------------

QUICK_FOX_MASKED = "The [MASK] brown fox [MASK] over the [MASK] dog"  # seed 003's exercise 4
RAW: dict[str, str | tuple[str, ...]] = {"view": VIEWS["raw"]}  # not rollout, whatever the student chose before
IT_FOCUS: dict[str, str | tuple[str, ...]] = {  # "it" against "animal" and "street", heads averaged
    **RAW,
    "attn_tab": "Token focus",
    "mean": "true",
    "attn_layer": LAST_ENCODER_LAYER,
    "token": "10 it",
    "targets": ("2 animal", "8 street"),
}  # positions checked against the tokenizer in tests

DISCOVER = Lesson(
    "discover",
    "Discover BERT: tokens, the masked word, attention",
    "the Discover BERT notebook",  # seed 000, Discover_BERT.ipynb
    "From WordPiece tokens to BERT's guess for a hidden word and what “it” attends to.",
    (
        Step(
            "The atomic unit: WordPiece tokens",
            "BERT never sees words, only **WordPiece tokens** from a fixed vocabulary. In the *Tokens* tab below, "
            "find the words that were split into several pieces, and the two tokens BERT adds around every input: "
            "`[CLS]` and `[SEP]`. A piece starting with `##` continues the word before it.",
            "tokenizer",
            {"text": "BERT means Bidirectional Encoder Representations from Transformers.", "tokenizer_tab": "Tokens"},
            control="tokenizer_tab",
        ),
        Step(
            "Predict the hidden word",
            "Masked language modelling is BERT's first pre-training task: a word is hidden behind `[MASK]` and "
            "BERT guesses it from its context on both sides. Make your guess first, then check it.",
            "fill_mask",
            {"text": "The [MASK] chased the mouse.", "fill_tab": "Guesses", "k": "10"},
            FillMaskTop1("The [MASK] chased the mouse."),
            (NOT_NEXT_WORD,),
            control="text",
        ),
        Step(
            "More than one guess",
            "BERT gives a probability to every token of its vocabulary. The bar chart shows the top 10 for "
            "this sentence: are they all adjectives? Change the sentence in the box and watch the guesses move.",
            "fill_mask",
            {"text": "Paris is the most [MASK] city in the world.", "fill_tab": "Guesses", "k": "10"},
            FillMaskTop1("Paris is the most [MASK] city in the world."),
            control="text",
        ),
        Step(
            "What does “it” attend to?",
            "The *Token focus* tab follows one token, **it**, and how much attention it pays to **animal** and "
            "**street**. The sliders choose the encoder layer (from 0) and the head; the switch averages the "
            "heads of the layer. Answer first, then look.",
            "attention",
            {"text": ANIMAL_TIRED, **IT_FOCUS},
            AttendsMore(ANIMAL_TIRED, "it", ("animal", "street")),
            (NOT_EXPLANATION,),
            control="attn_layer",
        ),
        Step(
            "Change one word",
            "Now the street is *too wide*. For a reader, “it” is now the street. Does the model's attention "
            "follow? Try other layers and single heads with the sliders too.",
            "attention",
            {"text": ANIMAL_WIDE, **IT_FOCUS},
            AttendsMore(ANIMAL_WIDE, "it", ("animal", "street")),
            (SAME_INDEX,),
            control="attn_layer",
        ),
        Step(
            "Where the rest of the attention goes",
            "The *Head view* draws every token's attention as lines, here for a middle encoder layer. Step "
            "through its single heads with the *Head* slider: many send most of their weight to `[SEP]` or `[CLS]`.",
            "attention",
            {**RAW, "text": ANIMAL_TIRED, "attn_tab": "Head view", "mean": "false", "attn_layer": MIDDLE_ENCODER_LAYER},
            callouts=(SPECIAL_NO_OP,),
            control="head",
        ),
        Step(
            "Several heads at once",
            "bertviz draws several heads of one layer together, each in its own colour. Here four heads of the same "
            "layer: do they look at the same tokens? Click **it** on the left to keep only its lines, or on the "
            "right to see who attends to it (by keyboard: pick it in *Focus on a token*); the *All … heads* button "
            "draws every head of the layer.",
            "attention",
            {
                **RAW,
                "text": ANIMAL_TIRED,
                "attn_tab": "Head view",
                "attn_layer": MIDDLE_ENCODER_LAYER,
                "heads": ("0", "1", "2", "3"),
            },
            control="heads",
        ),
        Step(
            "Meaning in context: the many senses of “field”",
            "The notebook ends with one word in eight sentences: a sports field (football, rugby, baseball), a "
            "farmer's field and a field of research. Each point is one occurrence of **field** at the last hidden "
            "state. Do the senses form groups?",
            "senses",
            {"source": "Preset", "preset": "field", "senses_tab": "Map", "senses_layer": LAST_HIDDEN_STATE},
            control="senses_layer",
        ),
        Step(
            "Every layer and head at once",
            "Back to attention: the *All heads* tab draws every head of every layer as a small map, as the "
            "notebook's bertviz *model view* does. Which heads look at the next or the previous token, and which send "
            "nearly everything to `[CLS]` or `[SEP]`? Here for the “too wide” sentence: one row per encoder layer, "
            "one column per head; a line beside the diagonal is the next or previous token, one bright column "
            "`[CLS]` or `[SEP]`. Click a head to open it in the *Heatmap* tab (by keyboard: its *Encoder layer* and "
            "*Head* sliders, then the *Heatmap* tab).",
            "attention",
            {**RAW, "text": ANIMAL_WIDE, "attn_tab": "All heads"},
            control="attn_tab",
        ),
        Step(
            "Explore on your own",
            f"The notebook's sentence to explore on your own: “{CALCULATORS}” Does **digit** attend to "
            "*arithmetical*, *keyboard* or *electronic* in the early layers? Do the higher layers gather on `[SEP]`, "
            "or spread evenly? Which layer seems to link the words by meaning? Click **digit** in the *Head view* (by "
            "keyboard: pick it in *Focus on a token*), step through the heads with the *Head* slider (or draw them "
            "all with **All … heads**), and move the *Encoder layer* slider.",
            "attention",
            {**RAW, "text": CALCULATORS, "attn_tab": "Head view", "attn_layer": "0", "mean": "false"},
            control="attn_layer",
        ),
    ),
)

SENSES = Lesson(
    "senses",
    "Word senses: one word, many meanings",
    "the BERT chapter's hands-on notebook",  # seed 001
    "“apple” the fruit and the company: where in the layers do the two senses pull apart?",
    (
        Step(
            "Before context",
            "Twelve sentences use **apple**: six about the fruit, six about the company. Each point on the map is "
            "one occurrence at **hidden state 0**, before any encoder layer, where both senses get the same word "
            "embedding: the points spread by position, not by sense. Hidden state 0 is the embeddings output, the "
            "word's embedding plus its position's (each sense has three sentences that open with the word). On a "
            "cased model such as bert-base-cased, *Apple* with a capital is another token than *apple*: there "
            "capitals, not senses, start apart.",
            "senses",
            {"source": "Preset", "preset": "apple", "senses_tab": "Map", "senses_layer": "0"},
            callouts=(STATIC_EMBEDDING,),
            control="senses_layer",
        ),
        Step(
            "Static against contextual",
            "The *Static vs contextual* tab compares the word's input embedding (the same row every time) with "
            "its vectors after the encoder layers.",
            "senses",
            {"source": "Preset", "preset": "apple", "senses_tab": "Static vs contextual"},
            control="senses_tab",
        ),
        Step(
            "Where do the senses separate?",
            "The *Separation by layer* chart scores, for every hidden state, how far apart the two senses are "
            "(silhouette: higher = further apart). Predict first, then look.",
            "senses",
            {"source": "Preset", "preset": "apple", "senses_tab": "Separation by layer"},
            BestSeparation("apple"),
            control="senses_tab",
        ),
        Step(
            "The map at the top",
            "The same map at the last hidden state. Hover the points (or read the table of coordinates under the "
            "map): which sentences sit on the wrong side?",
            "senses",
            {"source": "Preset", "preset": "apple", "senses_tab": "Map", "senses_layer": LAST_HIDDEN_STATE},
            control="senses_layer",
            class_sentences=True,
        ),
        Step(
            "The notebook's exercise: the last k hidden states",
            "The notebook averages the **last four** hidden states and asks you to try the last k = 1, 2, 3. The "
            "*Hidden state* control offers these means as `last2`, `last3`, `last4` (k = 1 is the last hidden "
            "state itself); compare their maps.",
            "senses",
            {"source": "Preset", "preset": "apple", "senses_tab": "Map", "senses_layer": WIDEST_LAST_K},
            control="senses_layer",
        ),
        Step(
            "How BERT learned all this",
            "The chapter's masking recipe, on a sentence: 15 % of the tokens are chosen; 80 % of them become "
            "[MASK], 10 % a random token, 10 % stay. BERT must give back every original. *Draw again* for another "
            "draw: which chosen tokens does BERT get right, and does a kept token help it?",
            "fill_mask",
            {"text": "I ate an apple and then called Apple about my broken phone.", "pretrain": "true", "draw": "1"},
            control="pretrain",
        ),
    ),
)

STORE_A, STORE_B = "I went to the store.", "At the store, I bought fresh strawberries."
STORE: dict[str, str | tuple[str, ...]] = {
    **RAW,
    "text": STORE_A,
    "b": STORE_B,
    "attn_tab": "Head statistics",
    "mean": "false",  # one head at a time: the Head slider is live
}


def pattern_step(title: str, text: str, statistic: str, callouts: tuple[str, ...] = ()) -> Step:
    """A step on the store pair's *Head statistics* grid: ``statistic`` chosen, and where its strongest head sits."""
    return Step(
        title,
        text,
        "attention",
        {**STORE, "stat": STATISTIC_BY_KEY[statistic].label},
        StrongestHead(STORE_A, STORE_B, statistic),
        callouts,
        control="stat",
    )


PATTERNS = Lesson(
    "patterns",
    "Attention patterns: what heads look at",
    "the BERT pre-training notebook",  # seed 002, "BERT: Pre-training of Deep Bidirectional Transformers"
    "Heads that look at the next word, the previous word, or the same word in the other sentence — found by "
    "statistics on the live model, not by a notebook's layer numbers.",
    (
        Step(
            "Two sentences, one input",
            "BERT reads a pair as one sequence: `[CLS]` A `[SEP]` B `[SEP]`. The *Tokens* tab shows it, with the "
            "segment (A or B) of every token.",
            "tokenizer",
            {"text": STORE_A, "b": STORE_B, "tokenizer_tab": "Tokens"},
            control="tokenizer_tab",
        ),
        pattern_step(
            "Pattern 1: attention to the next word",
            "The notebook finds this head by eye (“layer 2, head 0” of bert-base-uncased). The *Head statistics* "
            "grid measures it for every head at once: the step shows **To next token**; find the brightest cell.",
            "next",
            (SAME_INDEX,),
        ),
        pattern_step(
            "Pattern 2: attention to the previous word",
            "Now the statistic **To previous token**. The notebook says this pattern is less distinct than the "
            "next-word one: compare the brightest values of the two grids.",
            "previous",
        ),
        pattern_step(
            "Pattern 3: attention to the same word",
            "**To same token elsewhere** scores how much a token attends to the identical token at other positions "
            "(here *I*, *the*, *store* and the full stop appear twice). Find the brightest head, then open it in the "
            "*Head view* and click the second *store*.",
            "same_token",
        ),
        pattern_step(
            "Pattern 4: the same word in the other sentence",
            "**To same token in other sentence** follows *store* in B back to *store* in A. Open the brightest head "
            "in the *Head view* (choose its layer and head with the sliders) and click *store*. The pattern could "
            "help next sentence prediction (a guess: attention alone does not show what the NSP head uses). In this "
            "pair every repeated token has its twin in the other sentence, so the grid is the last step's; add a "
            "repeat inside B (*fresh strawberries and fresh cream*) and the two part.",
            "other_sentence",
        ),
        Step(
            "Where the rest goes: [CLS] and [SEP]",
            "The statistic is now **To [SEP]**: in bert-base-uncased, many heads of the middle layers send most of every token's "
            "attention to `[SEP]`, and the *Heatmap* of such a head is a bright column. Other models differ (the "
            "bundled encoder sends little to `[SEP]`): the grid shows where this model's heads do.",
            "attention",
            {**STORE, "stat": "To [SEP]"},
            callouts=(SPECIAL_NO_OP, NOT_EXPLANATION),
            control="stat",
        ),
    ),
)

FRANCE = "The capital of France is [MASK]."
OVERVIEW = Lesson(
    "overview",
    "BERT overview: tokens, padding, the mask, the two tasks",
    "the BERT Overview notebook",  # seed 003
    "WordPiece and special tokens, padding and why the attention mask matters, the model's size, and "
    "BERT's two pre-training tasks with their loss and verdict.",
    (
        Step(
            "WordPiece tokens and ids",
            "The *Tokens* tab lists every token of the sentence with its id and its attention-mask value. "
            "*Tokenization* becomes `token` + `##ization`: a word outside the vocabulary is split into known pieces.",
            "tokenizer",
            {
                "text": "Tokenization and padding are fundamental steps in most NLP pipelines.",
                "tokenizer_tab": "Tokens",
            },
            control="tokenizer_tab",
        ),
        Step(
            "The vocabulary and its special tokens",
            "The *Vocabulary* tab: its size, the five special tokens with their ids, and the `[unused]` entries "
            "BERT ships so that users can add their own tokens without resizing the model.",
            "tokenizer",
            {"tokenizer_tab": "Vocabulary"},
            control="tokenizer_tab",
        ),
        Step(
            "Padding: to the longest sentence, or to max_length?",
            "Sentences of one batch must have the same length, so short ones are filled with `[PAD]`: up to the "
            "batch's longest sentence, or up to a fixed max_length for every batch. The *Padding lab* compares the "
            "two on the notebook's batch of four (its exercise 2).",
            "tokenizer",
            {
                "tokenizer_tab": "Padding lab",
                "lines": "\n".join(SEED_BATCH),
                "pad": "longest",
                "pad_len": "64",
                "trunc": "true",
            },
            LessPadding(SEED_BATCH, 64),
            control="pad",
        ),
        Step(
            "Padding, and why the attention mask matters",
            "Now the *Padding lab* pads this batch to 16 tokens (and cuts the longest sentence to 16); its "
            "section on the attention mask runs the batch with and without it.",
            "tokenizer",
            {
                "tokenizer_tab": "Padding lab",
                "lines": "\n".join(SEED_BATCH),
                "pad": "max_length",
                "pad_len": "16",
                "trunc": "true",
                "mask_demo": "true",
            },
            MaskMatters(SEED_BATCH, 16),
            (PADDING_IS_FREE,),
            control="mask_demo",
        ),
        Step(
            "How it is built",
            "The *Architecture* tab draws BERT as the notebook's figure does, with the active model's own sizes: "
            "three embeddings summed, a stack of identical encoder layers (self-attention, then feed-forward), "
            "and the heads on top. Each box says how many parameters it holds.",
            "anatomy",
            {"anatomy_tab": "Architecture"},
            LargestPart(),
            control="anatomy_tab",
        ),
        Step(
            "How big is it?",
            "The *Parameters* tab counts the weights of every part. Guess the total first.",
            "anatomy",
            {"anatomy_tab": "Parameters"},
            ParameterCount(),
            control="anatomy_tab",
        ),
        Step(
            "Task 1: the masked word, and its loss",
            "The loss of the true word is −log of the probability BERT gives it: 0 when it is certain, large when "
            "it is surprised. Once you have answered, the *Guesses* tab shows it below the top guesses for the word "
            "typed in *Original word*.",
            "fill_mask",
            {"text": FRANCE, "fill_tab": "Guesses", "k": "10", "true_word": "paris"},
            FillMaskTop1(FRANCE),
            (NOT_NEXT_WORD,),
            control="true_word",
        ),
        Step(
            "Task 2: does B follow A?",
            "Next sentence prediction reads the pair as one input and decides from the `[CLS]` vector.",
            "next_sentence",
            {"a": DEFAULT_A, "b": DEFAULT_B, "nsp_tab": "Verdict"},
            NextSentenceVerdict(DEFAULT_A, DEFAULT_B),
        ),
        Step(
            "Task 2 with an unrelated B",
            "The notebook's false continuation. Then try your own B on the same topic that still does not follow.",
            "next_sentence",
            {"a": DEFAULT_A, "b": "Deep Learning is a branch of Machine Learning.", "nsp_tab": "Verdict"},
            NextSentenceVerdict(DEFAULT_A, "Deep Learning is a branch of Machine Learning."),
            (NOT_A_CLASSIFIER,),
            control="b",
        ),
        Step(
            "Exercise 4: several masks at once",
            "The notebook masks *quick*, *jumps* and *lazy*. *Every mask at a glance* lists each mask's top guess, "
            "the average confidence of the top guesses, and whether BERT got each hidden word right. Why is one "
            "mask easier than another? Mask other words with *Mask a word of the sentence* and compare.",
            "fill_mask",
            {"text": QUICK_FOX_MASKED, "fill_tab": "Guesses", "k": "3", "true_word": "quick, jumps, lazy"},
            control="true_word",
        ),
        Step(
            "Exercise 5: how good is NSP?",
            "The *Evaluation* tab scores the notebook's ten labelled pairs: accuracy, precision, recall, F1 and the "
            "confusion matrix. Edit a pair, or add your own hard ones, and watch the scores move.",
            "next_sentence",
            {"a": DEFAULT_A, "b": DEFAULT_B, "nsp_tab": "Evaluation"},
            control="nsp_tab",
        ),
    ),
)

PET, CODING = "I love my pet python", "I love coding in python"
TWO_PYTHONS: dict[str, str | tuple[str, ...]] = {
    "source": "Paste lines",
    "senses_lines": f"{PET} | snake\n{CODING} | programming language",
    "senses_word": "python",
    "refs": "snake, programming",
    "senses_tab": "Reference words",
    "senses_layer": LAST_HIDDEN_STATE,
}

INSIDE = Lesson(
    "inside",
    "Inside BERT: parameters, the pooler, WordPiece, a word in context",
    "the Introduction to BERT notebook",  # seed 004
    "The named parameters layer by layer, the pooler on [CLS], words the vocabulary lacks, “python” the "
    "snake against “python” the language, and the three embeddings every token starts from.",
    (
        Step(
            "Every named parameter",
            "The *Named parameters* tab lists each weight matrix with its shape, as the notebook prints them: the "
            "embeddings first, then the same block of matrices for every encoder layer, then the pooler. The filter "
            "shows encoder layer 0's attention: query, key, value and output. Clear it to see them all. Where the "
            "model has them, the pre-training heads come last; the notebook's `BertModel` leaves them out.",
            "anatomy",
            {"anatomy_tab": "Named parameters", "filter": "layer.0.attention"},
            control="filter",
        ),
        Step(
            "The pooler",
            "The pooler is one dense layer with tanh on top of the final `[CLS]` vector; next sentence prediction "
            "reads its output. The *Pooler* tab recomputes it by hand and compares with the model's own output.",
            "anatomy",
            {"text": "I love my pet python", "anatomy_tab": "Pooler"},
            control="anatomy_tab",
        ),
        Step(
            "A word the vocabulary lacks",
            "“Sinan” is not in the vocabulary. Look it up in the *Vocabulary* tab: which pieces does WordPiece use, "
            "and why is the text lower-cased first (*uncased*)?",
            "tokenizer",
            {"tokenizer_tab": "Vocabulary", "word": "Sinan"},
            control="word",
        ),
        Step(
            "Python the snake",
            "Two sentences, two pythons. The *Reference words* tab compares each occurrence of **python** with the "
            "words *snake* and *programming*, each read on its own, at the last hidden state. Predict first.",
            "senses",
            TWO_PYTHONS,
            CloserInContext((PET, CODING), "python", "snake"),
            (STATIC_EMBEDDING,),
            control="refs",
        ),
        Step(
            "Python the language",
            "Now the other reference word: read the column *cosine with “programming”*. The pet's python (sense "
            "*snake*) is the first row, the coder's (sense *programming language*) the second.",
            "senses",
            TWO_PYTHONS,
            CloserInContext((PET, CODING), "python", "programming"),
            control="refs",
        ),
        Step(
            "The many embeddings",
            "Before any layer, each token's vector is three table look-ups added and normalised: its word "
            "(WordPiece) embedding, the embedding of its position, and that of its segment (token type 0 or 1). "
            "The *Embeddings* tab computes it by hand for the notebook's “I am Sinan” and compares with the model's "
            "own output. Its section *The same token in another sentence* sets the notebook's “I am Matt” beside it: "
            "`[CLS]`, “i”, “am” and `[SEP]` take the same word-embedding rows in both. The vector entering layer 0 "
            "differs only where the position differs (`[SEP]`, one position earlier: “matt” is one token, “sinan” "
            "two). Context only comes from the layers above.",
            "anatomy",
            {"text": "I am Sinan", "anatomy_tab": "Embeddings", "emb_other": "I am Matt"},
            control="emb_other",
        ),
    ),
)

# --- BERT and its successors (issue 51): two models side by side, any two this server offers ---------------

NOT_A_BIGGER_BERT = (
    "**A successor is not simply a bigger BERT.** RoBERTa kept its shape, trained longer and dropped next sentence "
    "prediction; DistilBERT halved the layers; ALBERT shares one layer's weights; ELECTRA spots replaced tokens."
)
SAME_WORD_NOT_SAME_MODEL = (
    "**The same first guess does not make the same model.** Two models can agree on the top word with very "
    "different probabilities, from different vocabularies. Read the whole top 5 of each, not only the first."
)
TWO_MODELS_TEXT = "Unbelievably, the capital of France is [MASK]."
TWO_MODELS: dict[str, str | tuple[str, ...]] = {"anatomy_tab": "Two models"}

SUCCESSORS = Lesson(
    "successors",
    "BERT and its successors",
    "the lesson on BERT's family of models",  # no notebook: issue 51's comparison
    "The same sentence through BERT and one of its successors, side by side: their tokens, their parameters, "
    "their guesses for the masked word, and the pre-training tasks each kept or dropped.",
    (
        Step(
            "Two models, one sentence",
            "The *Two models* tab reads the sentence with the active model and, beside it, another model this "
            "server offers: a successor of BERT beside a BERT (roberta-base first), BERT beside a successor. Each "
            "tokenizer cuts words its own way. Predict first, then compare the two rows of tokens.",
            "anatomy",
            {**TWO_MODELS, "text": TWO_MODELS_TEXT},
            MoreTokens(TWO_MODELS_TEXT),
            (NOT_A_BIGGER_BERT,),
            control="second_model",
        ),
        Step(
            "Where the parameters are",
            "Under each model's tokens, its parameters by part: the embeddings, the encoder layers, the pooler and "
            "each pre-training head it has, adding up to the checkpoint's total. Which is larger?",
            "anatomy",
            TWO_MODELS,
            MoreParameters(),
            control="anatomy_tab",
        ),
        Step(
            "The masked word, each its own way",
            "Each family has its own mask token: BERT's and RoBERTa's are spelt differently. The page writes the "
            "sentence's mask as each model's own and lists the top 5 guesses of each model that has a masked "
            "language modelling head.",
            "anatomy",
            {**TWO_MODELS, "text": TWO_MODELS_TEXT},
            SameFirstGuess(TWO_MODELS_TEXT),
            (SAME_WORD_NOT_SAME_MODEL,),
            control="text",
        ),
        Step(
            "The pre-training tasks",
            "BERT learnt two tasks: the masked word, and whether sentence B followed sentence A. Its successors kept, "
            "changed or dropped the second. Under each model's guesses: the heads its checkpoint has, and why it "
            "lacks the others.",
            "anatomy",
            TWO_MODELS,
            PairTask(),
            control="anatomy_tab",
        ),
        Step(
            "Another successor",
            "Choose another model in *Beside it*: DistilBERT has half of BERT's layers, ALBERT one shared layer and "
            "a sentence-order task, ELECTRA's discriminator no masked-word head at all, ModernBERT rotary positions. "
            "What changes in each column?",
            "anatomy",
            TWO_MODELS,
            control="second_model",
        ),
    ),
)

LESSONS: dict[str, Lesson] = {
    lesson.key: lesson for lesson in (DISCOVER, SENSES, PATTERNS, OVERVIEW, INSIDE, SUCCESSORS)
}


def lesson_step(lesson: str | None, step: str | None) -> tuple[Lesson, int] | None:
    """The lesson and the step index (from 0) a URL names (``step`` counts from 1); None when it names none."""
    if lesson not in LESSONS:
        return None
    found = LESSONS[lesson]
    try:
        number = int(step or "1")
    except ValueError:
        number = 1
    return found, min(max(number, 1), len(found.steps)) - 1
