"""Encoding's sequence ranges (HF's sequence_ranges) through pickle, copy and Encoding.merge, against HF
tokenizers: after pickle (multiprocessing, datasets.map with num_proc) or copy.copy, token_to_sequence
past the end is None and a left pad's sequence id None, as HF's; merging two single encodings keeps the
later one's range for sequence 0 (HF: [None, None, 0, 0]).  Each failed before (review's finding)."""
from __future__ import annotations

import copy
import pickle

import pytest

tokenizers = pytest.importorskip("tokenizers")
import fastbpe  # noqa: E402


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from tokenizers import decoders, models, pre_tokenizers, processors

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    merges = [("H", "e"), ("He", "l"), ("Hel", "l"), ("Hell", "o"), ("Ġ", "w"), ("Ġw", "o")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    ref = tokenizers.Tokenizer(models.BPE(vocab=vocab, merges=merges))
    ref.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    ref.decoder = decoders.ByteLevel()
    ref.post_processor = processors.ByteLevel(trim_offsets=False)   # as GPT-2 / Qwen2.5 files
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    ref.save(str(path))
    return fastbpe.Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path))


def _view(e):
    return (e.ids, e.sequence_ids, [e.token_to_sequence(i) for i in range(len(e.ids) + 1)])


@pytest.mark.parametrize("how", ["pickle", "copy"])
def test_sequence_ranges_survive_pickle_and_copy(pair, how):
    ours, ref = pair
    again = (lambda e: pickle.loads(pickle.dumps(e))) if how == "pickle" else copy.copy
    got, want = again(ours.encode("Hello world 123")), again(ref.encode("Hello world 123"))
    assert _view(got) == _view(want)
    got.pad(20, direction="left", pad_id=0, pad_token="!")
    want.pad(20, direction="left", pad_id=0, pad_token="!")
    assert _view(got) == _view(want)


def test_merge_sequence_ids_as_hf(pair):
    ours, ref = pair
    got = type(ours.encode("x")).merge([ours.encode("Hello"), ours.encode(" world")], growing_offsets=True)
    want = tokenizers.Encoding.merge([ref.encode("Hello"), ref.encode(" world")], growing_offsets=True)
    assert _view(got) == _view(want)
