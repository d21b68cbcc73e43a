"""fastbpe.ubpe against the reference `ubpe-native` 0.3.0, run in a Python >= 3.12 subprocess
(found or installed by `datasources.ubpe_native_python`; skipped with the reason otherwise).

Same cases on both sides (tests/ubpe_reference_runner.py runs them): fitted models (dumps JSON),
encodings (ids and float weights compared exactly, top_n 1/2/5), decoding, and models loaded
across the two libraries."""
from __future__ import annotations

import json
import random

import pytest

import datasources as ds
import fastbpe.ubpe as ours
from helpers import make_docs
from ubpe_reference_runner import run_case


def _text_cases(rng: random.Random) -> list:
    cases = []
    options = [
        {},
        {"break_tokens": [" "]},
        {"regex_str": r" ?\w+| ?[^\w\s]+|\s+"},
        {"known_words": ["the", "and", "th"], "stop_tokens": [",", "."]},
        {"break_tokens": [" ", "!"], "stop_tokens": ["e"], "regex_str": r"\w+|[^\w]", "known_words": ["that"]},
    ]
    for k, extra in enumerate(options):
        for cls in ("UBPE", "UBPEClassic"):
            # " x": the reference fails on a document that splits into nothing (e.g. "and")
            docs = [d + " x" for d in make_docs(100 + k, rng.randint(10, 40), words_per_doc=rng.randint(3, 25))]
            alphabet = sorted(set("".join(docs)) | {"x", "!", "?", ",", "."})
            encode = make_docs(200 + k, 6) + ["", "x", "the the the", "that, the; the!"[:13]]
            encode = ["".join(c for c in d if c in alphabet) for d in encode]
            cases.append({
                "cls": cls,
                "init": {"alphabet": alphabet, "n_tokens": rng.choice([len(alphabet) + 8, 120, 300]), **extra},
                "fit": {"n_candidates": rng.choice([1, 5, 50]), "rearrange_tokens": k != 2, "quiet": True},
                "corpus": docs, "encode": encode, "top_n": [1, 2, 5] if cls == "UBPE" else [1],
            })
    return cases


def _int_cases(rng: random.Random) -> list:
    cases = []
    for k in range(6):
        n_sym = rng.randint(2, 6)
        corpus = [[rng.randrange(n_sym) if rng.random() < 0.5 else k % n_sym
                   for _ in range(rng.randint(2, 60))] + [0] for _ in range(rng.randint(1, 30))]
        encode = [[rng.randrange(n_sym) for _ in range(rng.randint(2, 30))] for _ in range(5)]
        cls = "UBPE" if k % 2 == 0 else "UBPEClassic"
        init = {"alphabet": list(range(n_sym)), "n_tokens": n_sym + rng.choice([3, 20, 80])}
        if k >= 4:
            init["break_tokens"] = [n_sym - 1]
        cases.append({"cls": cls, "init": init, "corpus": corpus, "encode": encode,
                      "fit": {"n_candidates": rng.choice([1, 3, 50]), "quiet": True},
                      "top_n": [1, 3] if cls == "UBPE" else [1]})
    return cases


def _normal_dump(dump: str) -> dict:
    """Sets are dumped in set order; everything else must be identical."""
    model = json.loads(dump)
    for field in ("break_tokens", "stop_tokens"):
        if field in model:
            model[field] = sorted(model[field])
    return model


def _normal(result: dict) -> dict:
    return {"dump": _normal_dump(result["dump"]), "encodings": result["encodings"],
            "decoded": result["decoded"]}


@pytest.fixture(scope="module")
def reference_results():
    rng = random.Random(11)
    cases = _text_cases(rng) + _int_cases(rng)
    try:
        results = ds.run_ubpe_reference(cases)
    except ds.MissingData as e:
        pytest.skip(f"ubpe-native reference unavailable: {e}")
    return cases, results


def test_models_and_encodings_equal_the_reference(reference_results):
    cases, results = reference_results
    for case, ref in zip(cases, results):
        assert "error" not in ref, ref
        mine = json.loads(json.dumps(run_case(case, ours)))
        assert _normal(mine) == _normal(ref), (case["cls"], case["init"].keys(), case["fit"])


def test_models_move_between_the_libraries(reference_results):
    cases, results = reference_results
    loaded_cases = []
    for case, ref in zip(cases, results):
        token_type = "str" if isinstance(case["init"]["alphabet"][0], str) else "int"
        mine = run_case(case, ours)
        # ours -> reference, and reference -> ours: both encode like the fitted originals
        loaded_cases.append(dict(case, load=mine["dump"], token_type=token_type))
        from_ref = run_case(dict(case, load=ref["dump"], token_type=token_type), ours)
        assert json.loads(json.dumps(from_ref))["encodings"] == ref["encodings"]
    for case, ref_loaded in zip(loaded_cases, ds.run_ubpe_reference(loaded_cases)):
        mine = json.loads(json.dumps(run_case(case, ours)))
        assert ref_loaded["encodings"] == mine["encodings"]
        assert _normal_dump(ref_loaded["dump"]) == _normal_dump(case["load"])
