"""Learn the word model (`_shared/failure_model.json`) from the mined messages and the corpus.

Not shipped. One command:

    uv run python tools/train_failure_model.py

Training text: every labelled class's messages in `tools/mined_messages.json` (written by
tools/mine_exceptions.py: the class name's words, its docstring's first line, its message
attributes and the literal messages raised with it), and every failure text of
`tests/corpus/failures.toml` with its labelled category. Multinomial naive Bayes over the
words and word pairs of `failure_model.features`, Laplace smoothing, equal priors (the mined
classes are mostly validation errors; a prior would only repeat that). A feature's weight per
category is its log-probability less the mean over the categories; features seen in fewer
than two documents, or whose weights barely differ, are dropped. The confidence margin is a
constant chosen once by leave-one-source-out over the corpus (tools/evaluate_failure_words.py),
never on a blind batch.
"""

from __future__ import annotations

import json
import math
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mcp_errors._shared import failure_words
from mcp_errors._shared.failure_model import WordModel, features
from mcp_errors._shared.failure_vocabulary import words_of

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "mcp_errors" / "_shared" / "failure_model.json"
MESSAGES = ROOT / "tools" / "mined_messages.json"
CORPUS = ROOT / "tests" / "corpus" / "failures.toml"
CATEGORIES = ("transient", "validation", "business", "permission")
MARGIN = 0.5
"""Natural-log units by which the winner must lead (chosen by leave-one-source-out, see the module doc)."""
MINIMUM_DOCUMENTS = 2
MINIMUM_SPREAD = 0.4


def words_for_model(text: str) -> list[str]:
    """A text's words as `judge_failure` reads them (paths and echoed input out)."""
    judged = failure_words._ECHOED_INPUT.sub(
        "", failure_words.strip_sdk_wrappers(text)[: failure_words.MAX_JUDGED_CHARS]
    )
    return words_of(failure_words._CAMEL_CASE.sub(" ", failure_words._PATH.sub(" ", judged)))


def mined_documents(
    messages: list[dict[str, Any]], *, leave_out_libraries: Iterable[str] = ()
) -> list[tuple[str, str]]:
    out = set()
    skip = set(leave_out_libraries)
    for entry in messages:
        if entry["library"] in skip:
            continue
        for message in entry["messages"]:
            out.add((entry["category"], message))
    return sorted(out)


def corpus_documents(entries: Iterable[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(entry["category"], entry["text"]) for entry in entries]


def document_features(text: str) -> frozenset[str]:
    """The features a training text counts for (once each: the counts are of documents)."""
    return frozenset(features(words_for_model(text)))


def count(
    documents: Iterable[tuple[str, str]], *, features_of: Callable[[str], frozenset[str]] = document_features
) -> tuple[dict[str, Counter[str]], Counter[str]]:
    """Per category, the documents each feature is in; and the documents each feature is in, all categories."""
    counts: dict[str, Counter[str]] = {category: Counter() for category in CATEGORIES}
    document_frequency: Counter[str] = Counter()
    for category, text in documents:
        present = features_of(text)
        document_frequency.update(present)
        counts[category].update(present)
    return counts, document_frequency


def weigh(counts: dict[str, Counter[str]], document_frequency: Counter[str], *, margin: float = MARGIN) -> WordModel:
    """The model from the counts (a feature in fewer than `MINIMUM_DOCUMENTS` documents is left out)."""
    vocabulary = [feature for feature, seen in document_frequency.items() if seen >= MINIMUM_DOCUMENTS]
    columns = [[counts[category].get(feature, 0) for feature in vocabulary] for category in CATEGORIES]
    totals = [sum(column) for column in columns]
    size = len(vocabulary)
    # A feature's weights depend only on its counts per category: computed once per counts seen.
    by_counts: dict[tuple[int, ...], tuple[float, ...] | None] = {}
    weights: dict[str, tuple[float, ...]] = {}
    for feature, seen in zip(vocabulary, zip(*columns, strict=True), strict=True):
        if seen in by_counts:
            centred = by_counts[seen]
        else:
            logs = [math.log((counted + 1) / (total + size)) for counted, total in zip(seen, totals, strict=True)]
            mean = sum(logs) / len(logs)
            centred = tuple(round(value - mean, 3) for value in logs)
            if max(centred) - min(centred) < MINIMUM_SPREAD:
                centred = None
            by_counts[seen] = centred
        if centred is not None:
            weights[feature] = centred
    return WordModel(weights=weights, margin=margin)


def train(documents: list[tuple[str, str]], *, margin: float = MARGIN) -> WordModel:
    return weigh(*count(documents), margin=margin)


def shipped_documents() -> list[tuple[str, str]]:
    messages = json.loads(MESSAGES.read_text(encoding="utf-8"))
    corpus = tomllib.loads(CORPUS.read_text(encoding="utf-8"))["failure"]
    return mined_documents(messages) + corpus_documents(corpus)


def main() -> int:
    model = train(shipped_documents())
    data = {
        "generated_by": "tools/train_failure_model.py",
        "categories": list(CATEGORIES),
        "margin": model.margin,
        "minimum_known": model.minimum_known,
        "weights": dict(sorted((feature, list(values)) for feature, values in model.weights.items())),
    }
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{len(model.weights)} features, margin {model.margin}, {OUT.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
