"""The word model: what a failure's words say when no name, code or phrase of the vocabulary does.

A small, deterministic model of word and word-pair weights per category (naive Bayes, as
log-probability ratios), learned by tools/train_failure_model.py from the messages mined from
client libraries (`mined_vocabulary.json`'s source) and the corpus of real failure texts, and
stored as data in `failure_model.json`. It decides only when confident: the winning
category's score must lead the next by `margin` (natural log units) on at least two known
words. It never says `transient` without an explicit transient signal (a wait, a timeout, a
retry, an unavailable or busy service): without one the best other category must win on its
own margin. Its evidence names the words that decided.

Linear in the words (two dictionary lookups per word), on the words `failure_words` already
cut from the text's first 4,096 characters.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from mcp_errors._shared.contract import ErrorCategory

__all__ = [
    "SIGNAL_FEATURE",
    "TRANSIENT_SIGNALS",
    "TRANSIENT_SIGNAL_PAIRS",
    "FeatureWeights",
    "Inference",
    "WordModel",
    "features",
    "has_transient_signal",
    "infer",
    "load_model",
    "transient_signal",
]

TRANSIENT_SIGNALS: Final = frozenset(
    {"timeout", "timeouts", "unavailable", "overloaded", "throttled", "throttling", "unreachable", "temporarily",
     "deadlock", "deadlocked"}
)  # fmt: skip
"""Words that say plainly a wait can help. Without one of them or of `TRANSIENT_SIGNAL_PAIRS`, the model never
says `transient`. Not "busy", "retryable" or "timed" alone: a text that only claims it ("[transient error,
retryable] Busy.") or repeats a word ("timed timed ...") is no signal."""

TRANSIENT_SIGNAL_PAIRS: Final = frozenset(
    {
        # a wait, or a retry asked for
        ("timed", "out"), ("time", "out"), ("took", "too"), ("took", "longer"), ("took", "more"),
        ("try", "again"), ("retry", "later"), ("please", "retry"), ("retry", "your"), ("retry", "after"),
        ("retry", "in"), ("retry", "the"), ("please", "wait"), ("wait", "for"), ("wait", "and"),
        # a service busy, starting, stopping, recovering or loading: any server's state, not one server's words
        # (MySQL, MongoDB, Elasticsearch, a model host's "model is currently loading" say the same)
        ("is", "busy"), ("server", "busy"), ("too", "busy"), ("currently", "busy"), ("starting", "up"),
        ("shutting", "down"), ("is", "restarting"), ("in", "recovery"), ("is", "recovering"), ("is", "loading"),
        ("still", "loading"), ("currently", "loading"),
        # contention between callers that ends: a lock held, a transaction to run again, connections all taken
        ("obtain", "lock"), ("acquire", "lock"), ("lock", "timeout"), ("serialize", "access"),
        ("serialization", "failure"), ("restart", "transaction"), ("restarting", "transaction"),
        ("many", "connections"), ("many", "clients"), ("connection", "slots"),
        # an unreachable service or a connection cut: unavailable, as plainly as "unavailable"
        ("is", "down"), ("network", "down"), ("no", "route"), ("gone", "away"), ("hang", "up"),
        ("connection", "lost"), ("lost", "connection"), ("connection", "reset"), ("connection", "closed"),
        ("closed", "connection"), ("side", "closed"), ("broken", "pipe"), ("connection", "refused"),
        ("connection", "aborted"), ("connection", "abort"), ("connection", "terminated"),
        ("terminating", "connection"), ("connection", "issue"),
    }
)  # fmt: skip
"""Word pairs that say plainly a wait can help (read with "the", "a" and "an" left out: "closed the connection")."""

SIGNAL_FEATURE: Final = "<transient signal>"
"""The feature a text with a transient signal has besides its words: its weights are learnt from every source's
signalled texts, so that a server's own wording for a busy or restarting state counts for what it says."""

_ARTICLES: Final = frozenset({"the", "a", "an"})


def transient_signal(words: Sequence[str]) -> str | None:
    """The words that say plainly that a wait can help (a timeout, a retry, a busy or cut-off service), or `None`.

    A pair counts as the words have it, or with "the", "a" and "an" left out ("closed the connection").
    """
    # Set operations first: most texts have no signal, and these run at C speed.
    if not TRANSIENT_SIGNALS.isdisjoint(words):
        return next(word for word in words if word in TRANSIENT_SIGNALS)
    for sequence in (words, [word for word in words if word not in _ARTICLES]):
        if not TRANSIENT_SIGNAL_PAIRS.isdisjoint(itertools.pairwise(sequence)):
            return " ".join(next(pair for pair in itertools.pairwise(sequence) if pair in TRANSIENT_SIGNAL_PAIRS))
    return None


def has_transient_signal(words: Sequence[str]) -> bool:
    """Whether the words say plainly that a wait can help (a timeout, a retry, an unavailable or busy service)."""
    return transient_signal(words) is not None


_CATEGORIES: Final = (
    ErrorCategory.TRANSIENT,
    ErrorCategory.VALIDATION,
    ErrorCategory.BUSINESS,
    ErrorCategory.PERMISSION,
)


# Words every kind of failure says ("the request failed", "an error occurred"): they tell a
# failure from a success, not one category from another, so the model never reads them.
_SAID_BY_EVERY_FAILURE: Final = frozenset(
    {"error", "errors", "failed", "failure", "fails", "fail", "occurred", "executing", "calling", "tool"}
)


def features(words: Sequence[str]) -> list[str]:
    """The words and word pairs the model reads: no lone numbers but three-digit ones (ports and ids say nothing)."""
    kept = [
        word
        for word in words
        if len(word) >= 3 and (not word[0].isdigit() or len(word) == 3) and word not in _SAID_BY_EVERY_FAILURE
    ]
    signal = [SIGNAL_FEATURE] if has_transient_signal(words) else []
    return kept + [f"{first} {second}" for first, second in itertools.pairwise(kept)] + signal


@dataclass(frozen=True, slots=True)
class Inference:
    """The model's reading: a category, the words that decided it, and by how much it won."""

    category: ErrorCategory
    words: tuple[str, ...]
    margin: float


class FeatureWeights(Mapping[str, Sequence[float]]):
    """Weights by feature, as a mapping of "word" and "first second" names, kept as the model reads them.

    Words by their name, word pairs by the pair of words (one string per word): a pair's "first second" name
    is never kept, so each pair is held once (memory, docs/performance.md).
    """

    __slots__ = ("pairs", "words")

    def __init__(self, words: dict[str, Sequence[float]], pairs: dict[tuple[str, str], Sequence[float]]) -> None:
        self.words = words
        self.pairs = pairs

    def __getitem__(self, name: str) -> Sequence[float]:
        found = self.words.get(name)
        if found is None:
            pair = _pair_of(name)
            found = None if pair is None else self.pairs.get(pair)
            if found is None:
                raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        yield from self.words
        yield from (f"{first} {second}" for first, second in self.pairs)

    def __len__(self) -> int:
        return len(self.words) + len(self.pairs)

    def put(self, name: str, values: Sequence[float], same_words: dict[str, str]) -> None:
        """Keep the weights of the feature `name` (a word, a "first second" pair, or `SIGNAL_FEATURE`).

        A word is in many pairs: `same_words` gives the one string kept for each word.
        """
        pair = _pair_of(name)
        if pair is None:
            self.words[same_words.setdefault(name, name)] = values
        else:
            first, second = pair
            self.pairs[same_words.setdefault(first, first), same_words.setdefault(second, second)] = values


def _pair_of(name: str) -> tuple[str, str] | None:
    """The two words of a pair's name ("first second"), or `None` for a word or `SIGNAL_FEATURE`."""
    first, _, second = name.partition(" ")
    return (first, second) if second and not first.startswith("<") else None


def _split_pairs(weights: Mapping[str, Sequence[float]]) -> FeatureWeights:
    """The weights with their word pairs keyed by the pair (the names are "first second")."""
    if isinstance(weights, FeatureWeights):
        return weights
    split = FeatureWeights({}, {})
    same_words: dict[str, str] = {}
    for name, values in weights.items():
        split.put(name, values, same_words)
    return split


@dataclass(frozen=True, slots=True)
class WordModel:
    """Weights per feature (one per category, in `_CATEGORIES` order), and how confident a decision must be."""

    weights: Mapping[str, Sequence[float]]
    margin: float
    minimum_known: int = 2
    _split: list[FeatureWeights] = field(default_factory=list, compare=False, repr=False)

    def _tables(self) -> FeatureWeights:
        """The weights with word pairs keyed by the pair, built once (a `FeatureWeights` is used as it is)."""
        if not self._split:
            self._split.append(_split_pairs(self.weights))
        return self._split[0]

    def infer(self, words: Sequence[str]) -> Inference | None:
        # A feature counts once however often it recurs, so each distinct word and pair is looked up once
        # (in the order first seen, for the evidence): dict.fromkeys drops repeats at C speed.
        tables = self._tables()
        weights_of = tables.words
        pair_weights = tables.pairs
        # No lone numbers but three-digit ones, as `features`.
        kept = [word for word in words if len(word) > 1 and (len(word) == 3 or not word[0].isdigit())]
        known: dict[str | tuple[str, str], Sequence[float]] = {
            word: weights_of[word] for word in dict.fromkeys(kept) if word in weights_of
        }
        known.update(
            (pair, pair_weights[pair]) for pair in dict.fromkeys(itertools.pairwise(kept)) if pair in pair_weights
        )
        signal = transient_signal(words)
        if signal is not None:
            found = weights_of.get(SIGNAL_FEATURE)
            if found is not None:
                known[f"{signal} (a wait helps)"] = found  # the evidence names the signal's words
        if len(known) < self.minimum_known:
            return None
        scores = [sum(column) for column in zip(*known.values(), strict=True)]
        allowed = range(len(_CATEGORIES))
        if signal is None:
            allowed = range(1, len(_CATEGORIES))  # transient is index 0: never without a signal
        ranked = sorted(allowed, key=lambda index: -scores[index])
        best, second = ranked[0], ranked[1]
        margin = scores[best] - scores[second]
        if margin < self.margin:
            return None
        deciding = sorted(known.items(), key=lambda item: -(item[1][best] - item[1][second]))[:3]
        names = tuple(" ".join(feature) if isinstance(feature, tuple) else feature for feature, _ in deciding)
        return Inference(_CATEGORIES[best], names, round(margin, 2))


class _Shared:
    """Each weight and each row of weights kept once, not once per feature.

    Of 21,892 weights 1,556 differ, and of 5,473 rows 926: about 1 MiB less in every process that
    judges a failure.
    """

    __slots__ = ("numbers", "rows")

    def __init__(self) -> None:
        self.numbers: dict[float | str, float] = {}
        self.rows: dict[tuple[float, ...], tuple[float, ...]] = {}

    def row(self, values: Iterable[float | str]) -> tuple[float, ...]:
        """The row of these weights (numbers, or their text as the file has it), each kept once."""
        numbers = self.numbers
        row = tuple(
            [numbers[value] if value in numbers else numbers.setdefault(value, float(value)) for value in values]
        )
        return self.rows.setdefault(row, row)


def load_model(data: Mapping[str, Any]) -> WordModel:
    """A model from its data (`failure_model.json`'s shape: `margin`, `minimum_known`, `weights`)."""
    shared = _Shared()
    weights = {feature: shared.row(values) for feature, values in data["weights"].items()}
    return WordModel(
        weights=_split_pairs(weights),
        margin=float(data["margin"]),
        minimum_known=int(data.get("minimum_known", 2)),
    )


# One feature of `failure_model.json`'s weights as tools/train_failure_model.py writes them: its
# name (a word, two words, or `SIGNAL_FEATURE`), its four weights, and what follows.
_WEIGHTS_KEY: Final = '"weights":{'
_FEATURE: Final = re.compile(r'"([^" \\]+)(?: ([^" \\]+))?":\[([^,\]]+,[^,\]]+,[^,\]]+,[^,\]]+)\]([,}])')


def _read_shipped(text: str) -> WordModel:
    """The model from `failure_model.json`'s text, read feature by feature into the final tables.

    `json.loads` would first build the whole file as 5,473 lists, most of which are dropped at
    once: the interpreter keeps the memory they took (resident memory in every process that
    judges a failure). The head (margin, categories) is read by `json`; the weights, the file's
    last member as the trainer writes it, one feature at a time. Any other layout is read by
    `json` as it is.
    """
    at = text.find(_WEIGHTS_KEY)
    if at < 0:
        return load_model(json.loads(text))
    data = json.loads(text[:at] + '"weights":{}}')
    shared = _Shared()
    weights = FeatureWeights({}, {})
    words, pairs = weights.words, weights.pairs
    same_words: dict[str, str] = {}
    rows_by_text: dict[str, tuple[float, ...]] = {}  # 926 rows of 5,473: most are read once, by their text
    at += len(_WEIGHTS_KEY)
    while (feature := _FEATURE.match(text, at)) is not None:
        first, second, values, follows = feature.groups()
        row = rows_by_text.get(values)
        if row is None:
            row = rows_by_text[values] = shared.row(values.split(","))
        # As `FeatureWeights.put`, inline: this runs once per feature of the first failure judged.
        if second is None or first.startswith("<"):
            name = first if second is None else f"{first} {second}"
            words[same_words.setdefault(name, name)] = row
        else:
            pairs[same_words.setdefault(first, first), same_words.setdefault(second, second)] = row
        at = feature.end()
        if follows == "}":
            break
    else:
        return load_model(json.loads(text))  # not the trainer's layout
    if text[at:].strip() != "}":
        return load_model(json.loads(text))
    return WordModel(
        weights=weights,
        margin=float(data["margin"]),
        minimum_known=int(data.get("minimum_known", 2)),
    )


_MODEL: WordModel | None = None


def _shipped() -> WordModel:
    global _MODEL
    if _MODEL is None:
        text = resources.files("mcp_errors._shared").joinpath("failure_model.json").read_text(encoding="utf-8")
        _MODEL = _read_shipped(text)
    return _MODEL


def infer(words: Sequence[str]) -> Inference | None:
    """What the shipped model reads in these words (as `words_of` cut them), or `None` when it is not confident."""
    return _shipped().infer(words)
