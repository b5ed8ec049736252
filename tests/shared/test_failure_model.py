"""The word model (`_shared/failure_model.py`): decides only when confident, never `transient` without a signal."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from mcp_errors import ErrorCategory, read_result
from mcp_errors._shared.failure_model import (
    SIGNAL_FEATURE,
    FeatureWeights,
    WordModel,
    _read_shipped,
    features,
    has_transient_signal,
    infer,
    load_model,
    transient_signal,
)
from mcp_errors._shared.failure_vocabulary import words_of
from mcp_errors._shared.failure_words import judge_failure
from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure

SHIPPED_TEXT = resources.files("mcp_errors._shared").joinpath("failure_model.json").read_text("utf-8")
SHIPPED = json.loads(SHIPPED_TEXT)


def test_the_shipped_weights_are_data_with_one_weight_per_category_and_a_margin() -> None:
    assert SHIPPED["categories"] == ["transient", "validation", "business", "permission"]
    assert SHIPPED["margin"] > 0
    assert len(SHIPPED["weights"]) >= 1000
    assert all(len(values) == 4 for values in SHIPPED["weights"].values())


def test_words_no_name_or_phrase_knows_are_read_by_the_model_and_its_evidence_names_them() -> None:
    text = "The supplied manifest could not be deserialised: unexpected character at line 3"
    judged = judge_failure(text)
    assert judged is not None
    assert judged.category is ErrorCategory.VALIDATION
    assert judged.evidence.startswith("word model:")
    assert any(word in judged.evidence for word in words_of(text))


def test_the_model_never_says_transient_without_an_explicit_signal() -> None:
    # Weights that favour transient strongly: without a signal the model must not follow them.
    model = WordModel(weights={"flaky": (9.0, 0.0, 0.0, 0.0), "gizmo": (9.0, 0.0, 0.0, 0.0)}, margin=1.0)
    assert model.infer(["flaky", "gizmo"]) is None
    signalled = model.infer(["flaky", "gizmo", "try", "again"])
    assert signalled is not None
    assert signalled.category is ErrorCategory.TRANSIENT


def test_a_text_that_only_claims_to_be_retryable_or_repeats_a_word_is_no_signal() -> None:
    assert not has_transient_signal(words_of("[transient error, retryable after 1.2.3s] Busy."))
    assert not has_transient_signal(words_of("timed " * 50))
    assert has_transient_signal(words_of("Write conflict. Please retry your operation."))
    assert has_transient_signal(words_of("Operation timed out"))


def test_the_model_decides_only_past_its_margin_and_on_two_known_words() -> None:
    model = WordModel(weights={"alpha": (0.0, 0.6, 0.0, 0.0), "beta": (0.0, 0.6, 0.0, 0.0)}, margin=1.0)
    assert model.infer(["alpha", "beta"]) is not None  # 1.2 + the pair it does not know
    assert model.infer(["alpha"]) is None  # one known word is not enough
    assert WordModel(weights=model.weights, margin=2.0).infer(["alpha", "beta"]) is None


def test_lone_numbers_are_not_features_but_statuses_are() -> None:
    assert features(["port", "53905", "refused", "503"]) == [
        "port",
        "refused",
        "503",
        "port refused",
        "refused 503",
    ]


@given(st.lists(st.sampled_from([*sorted(SHIPPED["weights"])[:400], "zzz", "again", "try"]), max_size=60))
def test_whatever_the_words_the_model_says_transient_only_with_a_signal(words: list[str]) -> None:
    inference = infer([part for word in words for part in word.split()])
    if inference is not None and inference.category is ErrorCategory.TRANSIENT:
        assert has_transient_signal([part for word in words for part in word.split()])


def test_the_model_data_loads_into_the_same_model() -> None:
    model = load_model(SHIPPED)
    assert model.margin == SHIPPED["margin"]
    assert len(model.weights) == len(SHIPPED["weights"])


@pytest.mark.parametrize(
    "text",
    [
        "The supplied manifest could not be deserialised: unexpected character at line 3",
        "Your account lacks the entitlement needed to view this workspace",
    ],
)
def test_where_the_reader_said_unknown_it_now_gets_the_proxys_answer_marked_inferred(text: str) -> None:
    outcome = read_result(CallToolResult(content=[TextContent(type="text", text=text)], is_error=True))
    details = UpstreamClassifier().classify(UpstreamFailure(tool="t", text=text), error_id="e")
    assert details is not None
    assert outcome.category is not None
    assert outcome.category_inferred
    assert outcome.category == details.category
    assert outcome.is_retryable == details.category.is_retryable


@pytest.mark.anyio
async def test_through_the_sdk_a_third_party_failure_no_phrase_names_reaches_the_reader_categorised(
    mode: str,
) -> None:
    server: MCPServer[Any] = MCPServer("third-party-words")

    def deploy() -> CallToolResult:
        text = "The supplied manifest could not be deserialised: unexpected character at line 3"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    server.add_tool(deploy, name="deploy", description="Deploys a manifest.")
    async with Client(server, mode=mode) as client:
        with anyio.fail_after(10):
            outcome = read_result(await client.call_tool("deploy", {}))
    assert outcome.category is ErrorCategory.VALIDATION
    assert outcome.category_inferred
    assert not outcome.is_retryable


def test_a_transient_signal_counts_as_evidence_with_the_weight_learnt_for_it() -> None:
    # Words that lean business, and a signal whose learnt weight leans transient: the signal decides.
    model = WordModel(
        weights={
            "gizmo": (0.0, 0.0, 0.6, 0.0),
            "widget": (0.0, 0.0, 0.6, 0.0),
            SIGNAL_FEATURE: (3.0, -1.0, -1.0, -1.0),
        },
        margin=0.5,
    )
    assert model.infer(["gizmo", "widget"]) is not None
    signalled = model.infer(["gizmo", "widget", "is", "starting", "up"])
    assert signalled is not None
    assert signalled.category is ErrorCategory.TRANSIENT
    assert "starting up (a wait helps)" in signalled.words
    assert SIGNAL_FEATURE in features(words_of("the gizmo is starting up"))
    assert SIGNAL_FEATURE not in features(words_of("the gizmo is started"))


@pytest.mark.parametrize(
    "text",
    [
        "The search node is recovering from a failover",
        "The inference model is currently loading",
        "Cluster coordinator shutting down, requests are being drained",
        "Worker pool is busy processing other jobs",
        "Could not acquire lock on document 42",
        "Closed the connection while reading the reply",
    ],
)
def test_a_busy_restarting_or_contended_service_in_words_no_phrase_knows_reads_as_transient(text: str) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.evidence.startswith("word model:")
    assert judged.category is ErrorCategory.TRANSIENT
    assert judged.retryable


@pytest.mark.parametrize(
    "text", ["The user account is locked", "Your subscription is not ready", "Account locked by the administrator"]
)
def test_a_locked_account_or_a_state_that_no_wait_changes_is_not_called_transient(text: str) -> None:
    judged = judge_failure(text)
    assert judged is None or not judged.retryable


def test_the_signals_are_read_with_articles_left_out() -> None:
    assert transient_signal(words_of("Server closed the connection unexpectedly")) == "closed connection"
    assert transient_signal(words_of("Kindly retry the request")) == "retry the"
    assert transient_signal(words_of("The door is closed; no connection needed")) is None


# -- the shipped model as it is kept (memory: issue 36) -------------------------------------


def test_the_shipped_file_read_feature_by_feature_is_what_json_reads_with_each_pair_kept_once_by_its_words() -> None:
    model = _read_shipped(SHIPPED_TEXT)
    assert isinstance(model.weights, FeatureWeights)
    assert {name: list(values) for name, values in model.weights.items()} == SHIPPED["weights"]
    assert (model.margin, model.minimum_known) == (SHIPPED["margin"], SHIPPED["minimum_known"])
    pair_names = [name for name in SHIPPED["weights"] if " " in name and not name.startswith("<")]
    assert len(model.weights.pairs) == len(pair_names) > 1000
    assert all(" " not in word for word in model.weights.words if word != SIGNAL_FEATURE)
    assert SIGNAL_FEATURE in model.weights.words


def test_a_model_file_in_another_layout_is_read_as_json_reads_it() -> None:
    weights_first = json.dumps({"weights": SHIPPED["weights"], "margin": 0.7}, separators=(",", ":"))
    for text in (json.dumps(SHIPPED, indent=1), weights_first):
        expected = json.loads(text)
        model = _read_shipped(text)
        assert {name: list(values) for name, values in model.weights.items()} == expected["weights"]
        assert model.margin == expected["margin"]


def test_weights_by_pair_answer_as_the_names_they_were_given() -> None:
    weights = FeatureWeights({}, {})
    same_words: dict[str, str] = {}
    for name in ("alpha", "alpha beta", SIGNAL_FEATURE):
        weights.put(name, (1.0, 0.0, 0.0, 0.0), same_words)
    assert list(weights) == ["alpha", SIGNAL_FEATURE, "alpha beta"]
    assert weights["alpha beta"] == (1.0, 0.0, 0.0, 0.0)
    assert "beta alpha" not in weights
    assert "beta" not in weights
    assert set(weights.pairs) == {("alpha", "beta")}
    assert next(iter(weights.pairs))[0] is next(iter(weights.words))  # "alpha" kept once
    assert weights == {
        "alpha": (1.0, 0.0, 0.0, 0.0),
        "alpha beta": (1.0, 0.0, 0.0, 0.0),
        SIGNAL_FEATURE: (1.0, 0.0, 0.0, 0.0),
    }


_AS_TRAINED = WordModel(
    weights={name: tuple(values) for name, values in SHIPPED["weights"].items()},
    margin=SHIPPED["margin"],
    minimum_known=SHIPPED["minimum_known"],
)


@given(st.lists(st.sampled_from([*sorted(SHIPPED["weights"])[::7], "zzz", "try", "again", "is", "busy"]), max_size=40))
def test_the_shipped_model_as_kept_reads_any_words_as_the_model_the_trainer_builds(words: list[str]) -> None:
    split = [part for word in words for part in word.split()]
    assert infer(split) == _AS_TRAINED.infer(split)
