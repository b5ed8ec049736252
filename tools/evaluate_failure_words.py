"""How the failure-word judgment generalizes: in-sample and leave-one-source-out over tests/corpus/.

In-sample, every text is judged by the shipped vocabulary (and model), which were built with
it in view. Leave-one-source-out (LOSO), each source's texts are judged by a vocabulary and a
model built *without* that source:

- a vocabulary phrase or exact code is taken to come from a source when that source's texts
  are the only corpus texts that contain it (the vocabulary was typed without provenance, so
  the pessimistic reading is taken: a phrase no other source shows was learnt from it); it is
  removed while that source is held out. A phrase no corpus text contains came from a
  catalogue (errno, RFC 9110, SQLSTATE, gRPC) and stays;
- the mined vocabulary (`_shared/mined_vocabulary.json`) carries its provenance (library and
  class); entries mined from the library a held-out source is (httpx for httpx's texts,
  psycopg for PostgreSQL's, the standard library for CPython's) are removed with it;
- the word model is trained again without the source's texts.

A source is the program or document family a text comes from (all of AWS, all of PostgreSQL,
one MCP server), so that a source's documented and observed texts are held out together.

Figures per judgment path as the proxy sees it (no category from the words is the proxy's
fallback, `business`): category right, texts recognised (not the fallback), retry verdict
right, non-transient texts called retryable.

Run: `uv run python tools/evaluate_failure_words.py [--misses]`.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import sys
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_types import CallToolResult, TextContent

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_failure_model import MESSAGES, corpus_documents, count, document_features, mined_documents, weigh

from mcp_errors._shared import failure_model, failure_vocabulary, failure_words
from mcp_errors._shared.failure_words import judge_failure, judge_success, strip_sdk_wrappers
from mcp_errors.check._judge import reads_as_failure

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"


def load_failures(path: Path = CORPUS / "failures.toml") -> list[dict[str, Any]]:
    return list(tomllib.loads(path.read_text(encoding="utf-8"))["failure"])


def _observed_arguments() -> dict[str, dict[str, Any]]:
    observed = json.loads((CORPUS / "observed.json").read_text(encoding="utf-8"))
    return {
        f"servers/{server['id']}#{call['label']}": call.get("arguments") or {}
        for server in observed["servers"]
        for call in server["calls"]
    }


ARGUMENTS = _observed_arguments()

# Families whose documented and observed texts go out together (prefix of the source -> family).
_FAMILIES = (
    ("Amazon", "AWS"),
    ("AWS", "AWS"),
    ("RFC", "HTTP statuses (RFC 9110/6585)"),
    ("PostgreSQL", "PostgreSQL"),
    ("libpq", "PostgreSQL"),
    ("Redis", "Redis"),
    ("redis-py", "Redis"),
    ("MariaDB", "MariaDB"),
    ("Node", "Node"),
    ("undici", "Node"),
    ("SQLite", "SQLite"),
    ("CPython", "CPython"),
    ("gRPC", "gRPC"),
    ("Stripe", "Stripe"),
    ("OpenAI", "OpenAI"),
    ("Anthropic", "Anthropic"),
    ("Google", "Google"),
    ("GitHub", "GitHub"),
    ("Cloudflare", "Cloudflare"),
    ("Azure", "Azure"),
    ("git version", "git"),
    ("nginx", "nginx"),
)


def source_of(entry: Mapping[str, Any]) -> str:
    """The family a text comes from: one MCP server, one library, one vendor's documents."""
    source = str(entry["source"]).split(",")[0].split(" (")[0].split("==")[0].split(" via ")[0].strip()
    for prefix, family in _FAMILIES:
        if source.startswith(prefix):
            return family
    # A package's version is not a family of its own: "axios@1.21.1" is axios.
    return source.rsplit("@", 1)[0] if source.startswith("@") else source.split(" ")[0].split("@")[0]


def arguments_of(entry: Mapping[str, Any]) -> dict[str, Any] | None:
    return ARGUMENTS.get(str(entry.get("ref", "")).split(" [")[0])


def _structured(entry: Mapping[str, Any]) -> Any:
    return json.loads(entry["structured_content"]) if "structured_content" in entry else None


@dataclass(frozen=True)
class Reading:
    category: str | None
    """`None`: the words named nothing (the proxy's fallback); "success": not read as a failure."""
    retryable: bool
    code: str | None = None

    def as_the_proxy(self) -> str:
        return "business" if self.category is None else self.category


def judge(entry: Mapping[str, Any]) -> Reading:
    """One text through the one judgment, as the checker and the proxy's words step read it."""
    arguments = arguments_of(entry)
    if entry["shape"] == "disguised":
        result = CallToolResult(
            content=[TextContent(type="text", text=entry["text"])], structured_content=_structured(entry)
        )
        if reads_as_failure(result, arguments) is None:
            return Reading("success", False)
        judged = judge_success(entry["text"], _structured(entry), arguments=arguments)
        if judged is not None and judged.code == "TOOL_ERROR":
            return Reading(None, False, "TOOL_ERROR")
    else:
        judged = judge_failure(strip_sdk_wrappers(entry["text"]), arguments=arguments)
    if judged is None:
        return Reading(None, False)
    return Reading(judged.category.value, judged.retryable, judged.code)


@dataclass(frozen=True)
class Figures:
    texts: int
    category: float
    recognised: float
    verdict: float
    wrong_retryable: list[str]
    disguised_missed: int
    misses: list[tuple[str, str, str, str]]

    def row(self, label: str) -> str:
        return (
            f"| {label} | {self.texts} | {self.category:.1%} | {self.recognised:.1%} | {self.verdict:.1%} "
            f"| {len(self.wrong_retryable)} |"
        )


def figures(pairs: list[tuple[Mapping[str, Any], Reading]]) -> Figures:
    total = len(pairs)
    right = sum(reading.as_the_proxy() == entry["category"] for entry, reading in pairs)
    recognised = sum(reading.category not in (None, "success") for _, reading in pairs)
    verdict = sum(reading.retryable == entry["retryable"] for entry, reading in pairs)
    wrong = [str(entry["text"]) for entry, reading in pairs if reading.retryable and not entry["retryable"]]
    missed = sum(entry["shape"] == "disguised" and reading.category == "success" for entry, reading in pairs)
    misses = [
        (source_of(entry), str(entry["text"])[:100], str(entry["category"]), reading.as_the_proxy())
        for entry, reading in pairs
        if reading.as_the_proxy() != entry["category"]
    ]
    return Figures(total, right / total, recognised / total, verdict / total, wrong, missed, misses)


# -- provenance of the vocabulary's entries ------------------------------------------------


def _text_words(entry: Mapping[str, Any]) -> list[str]:
    text = strip_sdk_wrappers(str(entry["text"]))[: failure_words.MAX_JUDGED_CHARS]
    text = failure_words._ECHOED_INPUT.sub("", text)
    return failure_vocabulary.words_of(failure_words._PATH.sub(" ", text))


def phrase_sources(entries: list[dict[str, Any]]) -> dict[tuple[str, ...], set[str]]:
    """For every vocabulary phrase and exact code, the sources whose texts contain it."""
    found: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for entry in entries:
        source = source_of(entry)
        words = _text_words(entry)
        for at, word in enumerate(words):
            for phrase, _kind, _strength in failure_vocabulary.phrases_by_first_word().get(word, ()):
                if tuple(words[at : at + len(phrase)]) == phrase:
                    found[phrase].add(source)
        for size in (1, 2, 3):
            for at in range(len(words) - size + 1):
                joined = "".join(words[at : at + size])
                if joined in failure_vocabulary.EXACT_CODES:
                    found[("=" + joined,)].add(source)
    return found


def signal_sources(entries: list[dict[str, Any]]) -> dict[tuple[str, ...], set[str]]:
    """For every transient signal of the word model (a word or a pair), the sources whose texts contain it."""
    found: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for entry in entries:
        words = _text_words(entry)
        plain = [word for word in words if word not in ("the", "a", "an")]
        for word in failure_model.TRANSIENT_SIGNALS.intersection(words):
            found[(word,)].add(source_of(entry))
        for pair in failure_model.TRANSIENT_SIGNAL_PAIRS.intersection(
            [*itertools.pairwise(words), *itertools.pairwise(plain)]
        ):
            found[pair].add(source_of(entry))
    return found


STRICT_SIGNALS: list[bool] = []
"""`--strict-signals`: a transient signal only one source's texts contain goes out with it too (its wording may
have been chosen from that source, although each is general wording)."""


def learnt_from(entries: list[dict[str, Any]]) -> dict[str, set[tuple[str, ...]]]:
    """The phrases (and `=code`s) each source alone shows: what the vocabulary may have learnt from it."""
    by_source: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for phrase, sources in phrase_sources(entries).items():
        if len(sources) == 1:
            by_source[next(iter(sources))].add(phrase)
    if STRICT_SIGNALS:
        for signal, sources in signal_sources(entries).items():
            if len(sources) == 1:
                by_source[next(iter(sources))].add(("~", *signal))
    return by_source


# The libraries a source *is* (not those it is built on): their mined entries go out with it.
MINED_FROM = {
    "AWS": ("boto3", "botocore", "s3transfer"),
    "Google": ("google-api-core", "google-auth", "google-cloud-storage", "google-api-python-client"),
    "Azure": ("azure-core", "azure-identity", "azure-storage-blob"),
    "PostgreSQL": ("psycopg", "psycopg2-binary", "asyncpg"),
    "Redis": ("redis",),
    "CPython": ("python-stdlib",),
    "MariaDB": ("pymysql", "mysql-connector-python"),
    "gRPC": ("grpcio",),
    "git": ("gitpython",),
    "httpx": ("httpx",),
    "requests": ("requests",),
    "aiohttp": ("aiohttp",),
    "Stripe": ("stripe",),
    "OpenAI": ("openai",),
    "Anthropic": ("anthropic",),
    "GitHub": ("PyGithub",),
}
# The same families' Node packages (`tools/_walk_node_errors.py`); a Node source goes out with
# its own package too (`libraries_of`).
NPM_MINED_FROM = {
    "AWS": ("npm:@aws-sdk/client-s3", "npm:@aws-sdk/client-dynamodb", "npm:@aws-sdk/client-sqs"),
    "Google": ("npm:@google-cloud/storage", "npm:google-gax"),
    "Azure": ("npm:@azure/core-rest-pipeline", "npm:@azure/storage-blob"),
    "PostgreSQL": ("npm:pg", "npm:pg-protocol"),
    "Redis": ("npm:redis", "npm:@redis/client", "npm:ioredis"),
    "gRPC": ("npm:@grpc/grpc-js",),
    "Stripe": ("npm:stripe",),
    "OpenAI": ("npm:openai",),
    "Anthropic": ("npm:@anthropic-ai/sdk",),
    "GitHub": ("npm:@octokit/request-error",),
    "@elastic/elasticsearch": ("npm:@elastic/transport",),
    "elasticsearch": ("npm:@elastic/elasticsearch", "npm:@elastic/transport"),
    "dockerode": ("npm:docker-modem",),
    "docker": ("npm:dockerode", "npm:docker-modem"),
    "kubernetes": ("npm:@kubernetes/client-node",),
}


def libraries_of(source: str | None) -> tuple[str, ...]:
    """The libraries whose mined entries go out while `source` is held out."""
    if not source:
        return ()
    return MINED_FROM.get(source, ()) + NPM_MINED_FROM.get(source, ()) + (f"npm:{source}",)


def mined_without(source: str | None) -> list[tuple[tuple[str, ...], Any, str]]:
    """The mined entries, less those only the libraries `source` is gave (provenance: "library version class; ...")."""
    libraries = libraries_of(source)
    kept = []
    for entry in failure_vocabulary.MINED:
        origins = [part.strip().split(" ")[0] for part in entry[2].split(";")]
        if not libraries or not all(origin in libraries for origin in origins):
            kept.append(entry)
    return kept


MARGIN_OVERRIDE: list[float] = []


def model_without(source: str, entries: list[dict[str, Any]]) -> failure_model.WordModel:
    """The word model trained again without `source`'s texts and what was mined from the libraries it is."""
    return _Folds(entries).model_without(source)


class _Folds:
    """Every fold's word model from one count of all the documents, less the held-out ones.

    The same model `train` builds from the fold's documents (counts are sums, so taking the
    held-out documents' features out of the full count gives the fold's count exactly), without
    reading every document's words again for each of the folds.
    """

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.messages = json.loads(MESSAGES.read_text(encoding="utf-8"))
        self.entries = entries
        self.mined = mined_documents(self.messages)
        self._features: dict[str, frozenset[str]] = {}
        self.counts, self.documents = count(self.mined + corpus_documents(entries), features_of=self.features_of)

    def features_of(self, text: str) -> frozenset[str]:
        found = self._features.get(text)
        if found is None:
            found = self._features[text] = document_features(text)
        return found

    def model_without(self, source: str) -> failure_model.WordModel:
        kept = set(mined_documents(self.messages, leave_out_libraries=libraries_of(source)))
        held_out = [document for document in self.mined if document not in kept]
        held_out += corpus_documents(entry for entry in self.entries if source_of(entry) == source)
        self._move(held_out, -1)
        try:
            return weigh(self.counts, self.documents, **({"margin": MARGIN_OVERRIDE[0]} if MARGIN_OVERRIDE else {}))
        finally:
            self._move(held_out, +1)

    def _move(self, documents: list[tuple[str, str]], sign: int) -> None:
        for category, text in documents:
            change = dict.fromkeys(self.features_of(text), sign)
            self.documents.update(change)
            self.counts[category].update(change)


@contextlib.contextmanager
def without(
    phrases: set[tuple[str, ...]], source: str | None = None, model: failure_model.WordModel | None = None
) -> Iterator[None]:
    """The judgment with these phrases and codes taken out, and what was mined from the library `source` is."""
    saved_phrases = failure_words.PHRASES_BY_FIRST_WORD
    saved_codes = failure_words.EXACT_CODES
    failure_words.PHRASES_BY_FIRST_WORD = failure_vocabulary.build_phrases(
        leave_out=phrases, mined=mined_without(source)
    )
    failure_words.EXACT_CODES = {name: kind for name, kind in saved_codes.items() if ("=" + name,) not in phrases}
    saved_model = failure_model._MODEL
    if model is not None:
        failure_model._MODEL = model
    saved_signals = failure_model.TRANSIENT_SIGNALS, failure_model.TRANSIENT_SIGNAL_PAIRS
    signals = {phrase[1:] for phrase in phrases if phrase[:1] == ("~",)}
    failure_model.TRANSIENT_SIGNALS = frozenset(word for word in saved_signals[0] if (word,) not in signals)  # type: ignore[misc]
    failure_model.TRANSIENT_SIGNAL_PAIRS = saved_signals[1] - signals  # type: ignore[misc]
    try:
        yield
    finally:
        failure_words.PHRASES_BY_FIRST_WORD = saved_phrases
        failure_words.EXACT_CODES = saved_codes
        failure_model._MODEL = saved_model
        failure_model.TRANSIENT_SIGNALS, failure_model.TRANSIENT_SIGNAL_PAIRS = saved_signals  # type: ignore[misc]


def in_sample(entries: list[dict[str, Any]]) -> Figures:
    return figures([(entry, judge(entry)) for entry in entries])


def leave_one_source_out(
    entries: list[dict[str, Any]], *, judged: Callable[[Mapping[str, Any]], Reading] = judge
) -> tuple[Figures, dict[str, Figures]]:
    learnt = learnt_from(entries)
    by_source: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in entries:
        by_source[source_of(entry)].append(entry)
    pairs: list[tuple[Mapping[str, Any], Reading]] = []
    per_source: dict[str, Figures] = {}
    folds = _Folds(entries)
    for source, texts in sorted(by_source.items()):
        with without(learnt.get(source, set()), source, folds.model_without(source)):
            readings = [(entry, judged(entry)) for entry in texts]
        per_source[source] = figures(readings)
        pairs += readings
    return figures(pairs), per_source


def score_batch(path: Path, *, show_misses: bool = False) -> int:
    """A batch scored by the shipped judgment: as the proxy reads it, and as the reader does (unknown is wrong)."""
    entries = load_failures(path)
    pairs = [(entry, judge(entry)) for entry in entries]
    found = figures(pairs)
    reader = sum(reading.category == entry["category"] for entry, reading in pairs) / len(pairs)
    sources = {str(entry["source"]).split(",")[0] for entry in entries}
    print(f"{path.name}: {len(entries)} texts from {len(sources)} sources")
    print(
        "| judged | texts | category right | recognised (not the fallback) | retry verdict right "
        "| non-transient called retryable |"
    )
    print("|---|---|---|---|---|---|")
    print(found.row("proxy (fallback: business)"))
    print(f"reader (unknown counted wrong): category right {reader:.1%}")
    if show_misses:
        for miss in found.misses:
            print("  ", miss)
        for text in found.wrong_retryable:
            print("   called retryable:", text[:100])
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list the texts judged wrong")
    parser.add_argument("--per-source", action="store_true", help="a row per held-out source")
    parser.add_argument("--blind", type=Path, help="score a new batch (a failures.toml-shaped file) as shipped")
    parser.add_argument("--margin", type=float, help="the word model's margin, to compare (held-out folds only)")
    parser.add_argument(
        "--strict-signals", action="store_true", help="a transient signal only one source shows goes out with it too"
    )
    options = parser.parse_args(argv)
    if options.strict_signals:
        STRICT_SIGNALS.append(True)
    if options.margin is not None:
        MARGIN_OVERRIDE.append(options.margin)
    if options.blind is not None:
        return score_batch(options.blind, show_misses=options.misses)
    entries = load_failures()
    sources = Counter(source_of(entry) for entry in entries)
    print(f"{len(entries)} failure texts from {len(sources)} sources")
    print(
        "| judged | texts | category right | recognised (not the fallback) | retry verdict right "
        "| non-transient called retryable |"
    )
    print("|---|---|---|---|---|---|")
    inside = in_sample(entries)
    print(inside.row("in-sample"))
    loso, per_source = leave_one_source_out(entries)
    print(loso.row("leave one source out"))
    if options.per_source:
        for source, figs in per_source.items():
            print(figs.row(f"  {source}"))
    if options.misses:
        print("\nleave-one-source-out misses (source, text, expected, judged):")
        for miss in loso.misses:
            print("  ", miss)
        for text in loso.wrong_retryable:
            print("   called retryable:", text[:100])
    return 0


if __name__ == "__main__":
    sys.exit(main())
