"""The vocabulary of failure words as data: every phrase names a kind, and the docs table is the vocabulary."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from mcp_errors import ErrorCategory
from mcp_errors._shared import failure_vocabulary as vocabulary
from mcp_errors._shared.failure_vocabulary import (
    EXACT_CODES,
    KINDS,
    MINED,
    VOCABULARY,
    build_phrases,
    phrases_by_first_word,
    words_of,
)
from mcp_errors._shared.failure_words import judge_failure

DOC = Path(__file__).parents[2] / "docs" / "failure-words.md"


def test_a_name_is_cut_into_the_words_the_vocabulary_is_written_in() -> None:
    assert words_of("ReadTimeout('')") == ["readtimeout"]
    assert words_of("getaddrinfo EAI_AGAIN db.internal") == ["getaddrinfo", "eai", "again", "db", "internal"]
    assert words_of("HTTP/1.1 503") == ["http", "1.1", "503"]


def test_every_kind_says_what_happened_and_only_transient_kinds_are_retryable_ones() -> None:
    for code, kind in KINDS.items():
        assert kind.code == code
        assert kind.what_happened.endswith(".")
    transient = {code for code, kind in KINDS.items() if kind.category is ErrorCategory.TRANSIENT}
    assert all(code.startswith(("UPSTREAM_", "DATABASE_", "SERVER_RESOURCES")) for code in transient)


def test_every_phrase_is_indexed_by_its_first_word_longest_first() -> None:
    for first, entries in phrases_by_first_word().items():
        assert all(phrase[0] == first for phrase, _, _ in entries)
        lengths = [len(phrase) for phrase, _, _ in entries]
        assert lengths == sorted(lengths, reverse=True)
    assert set(EXACT_CODES.values()) <= set(KINDS.values())


def test_the_docs_table_is_the_vocabulary() -> None:
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- vocabulary:start -->\n(.*?)<!-- vocabulary:end -->", text, re.S)
    assert found is not None
    assert found.group(1) == render_table(), "regenerate: uv run python tests/shared/test_failure_vocabulary.py"


def render_table() -> str:
    lines = ["| code | category | execution state | strength | words |", "|---|---|---|---|---|"]
    lines += [
        f"| `{code}` | {category} | {state} | {strength} | {words} |"
        for code, category, state, strength, words in _vocabulary_rows()
    ]
    return "\n".join(lines) + "\n"


def _vocabulary_rows() -> list[tuple[str, str, str, str, str]]:
    rows = []
    for code, strength, phrases in VOCABULARY:
        kind = KINDS[code]
        state = kind.execution_state.value if kind.execution_state is not None else "-"
        words = ", ".join(f"`{phrase.strip()}`" for phrase in phrases.split("|"))
        rows.append((code, kind.category.value, state, str(strength), words))
    return rows


if __name__ == "__main__":  # rewrite the docs table from the vocabulary
    page = DOC.read_text(encoding="utf-8")
    start, end = "<!-- vocabulary:start -->\n", "<!-- vocabulary:end -->"
    head, _, rest = page.partition(start)
    DOC.write_text(head + start + render_table() + end + rest.partition(end)[2], encoding="utf-8")


# -- the mined vocabulary (tools/mine_exceptions.py) ---------------------------------------


def test_every_mined_entry_names_where_it_came_from_and_a_kind_of_the_vocabulary() -> None:
    assert len(MINED) >= 1000
    for words, kind, provenance in MINED:
        assert words
        assert kind in KINDS.values()
        assert provenance.strip()


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("paramiko.ssh_exception.NoValidConnectionsError: [Errno None] Unable to connect to port 22", "transient"),
        ("botocore.exceptions.NoCredentialsError", "permission"),
        ("ORA-00942: table or view does not exist", "validation"),
        ("pymongo.errors.OperationFailure: codeName WriteConflict", "transient"),
        ("npm error code ETARGET", "validation"),
        ("curl: (28) Operation too slow", "transient"),
        ("elasticsearch.AuthenticationException", "permission"),
    ],
)
def test_mined_names_and_catalogue_codes_are_read_as_their_kind(text: str, category: str) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.category.value == category


def test_a_typed_phrase_wins_over_a_mined_entry_with_the_same_words() -> None:
    typed = build_phrases(mined=())
    shipped = build_phrases()
    for words, _kind, _provenance in MINED:
        if any(entry[0] == words for entry in typed.get(words[0], ())):
            assert [entry for entry in shipped[words[0]] if entry[0] == words] == [
                entry for entry in typed[words[0]] if entry[0] == words
            ]


_IMPORT_THEN_JUDGE = """
import sys

opened = []


def hook(event, args):
    if event == "open" and str(args[0]).endswith("mined_vocabulary.json"):
        opened.append(args[0])


sys.addaudithook(hook)
import mcp_errors
import mcp_errors._shared.failure_vocabulary
import mcp_errors.check._judge
import mcp_errors.proxy._classify
from mcp_errors._shared.failure_words import judge_failure

print(len(opened))
judge_failure("connect ECONNREFUSED 10.0.0.7:5432")
judge_failure("could not serialize access due to concurrent update")
print(len(opened))
"""


def test_importing_the_vocabulary_reads_no_mined_data_until_a_text_is_judged_and_then_once() -> None:
    # A fresh interpreter: this one imported the vocabulary long ago. The audit hook sees every file opened.
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_THEN_JUDGE], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["0", "1"]


def test_threads_that_judge_at_once_read_the_mined_data_once_and_share_one_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []
    real_read = vocabulary._read_mined_phrases

    def counted_read(words: dict[str, str] | None = None) -> vocabulary.MinedWords:
        reads.append(1)
        return real_read(words)

    monkeypatch.setattr(vocabulary, "_MINED", None)
    monkeypatch.setattr(vocabulary, "_PHRASES", None)
    monkeypatch.setattr(vocabulary, "_read_mined_phrases", counted_read)
    start = threading.Barrier(8)
    tables: list[vocabulary.PhraseTable] = []

    def first_use() -> None:
        start.wait(timeout=30)
        tables.append(vocabulary.phrases_by_first_word())

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(reads) == 1
    assert len(tables) == 8
    assert all(table is tables[0] for table in tables)
    assert tables[0] == build_phrases()


def test_judging_keeps_no_provenance_and_reads_the_table_the_mined_entries_make(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vocabulary, "_MINED", None)
    monkeypatch.setattr(vocabulary, "_PHRASES", None)
    table = vocabulary.phrases_by_first_word()
    assert vocabulary._MINED is None  # the provenance of 1,715 entries is not held to judge
    assert table == build_phrases()  # which reads them, with their provenance


def test_the_mined_words_read_entry_by_entry_are_those_json_reads() -> None:
    from_json = [(words, kind) for words, kind, _provenance in vocabulary._read_mined()]
    assert list(zip(*vocabulary._read_mined_phrases(), strict=True)) == from_json
    assert len(from_json) >= 1000


def test_a_mined_file_in_another_layout_is_read_as_json_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"names": [["Quota\u00e9xceeded", "UPSTREAM_RATE_LIMITED", 'a "library"']], "catalogue": []}
    monkeypatch.setattr(vocabulary, "_mined_text", lambda: json.dumps(data))
    read = list(zip(*vocabulary._read_mined_phrases(), strict=True))
    assert read == [(words, kind) for words, kind, _provenance in vocabulary._read_mined()]
    assert read == [(("quota", "xceeded"), KINDS["UPSTREAM_RATE_LIMITED"])]
