"""An Encoding's special tokens (fastbpe/special_tokens.py, encoding.py): ids far above the
vocabulary cost no memory, splitting text at them stays linear, the longest token wins."""
from __future__ import annotations

import textwrap

from cli_run import run_python
from helpers import toy_encoding


# -- memory does not grow with the largest special id ----------------------------------------------

def test_huge_special_id_costs_no_memory():
    # under a 1.5 GB address-space limit: the dense tables for id 2**30 would need >12 GB
    code = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        from fastbpe import Encoding
        ranks = {bytes([i]): i for i in range(256)}
        enc = Encoding("x", pat_str=r"\\w+|\\s+", mergeable_ranks=ranks,
                       special_tokens={"<|big|>": 2**30, "<|small|>": 256})
        ids = enc.encode("a<|big|> <|small|>", allowed_special="all")
        assert ids == [97, 2**30, 32, 256], ids
        assert enc.decode(ids) == "a<|big|> <|small|>"
        assert enc.decode_single_token_bytes(2**30) == b"<|big|>"
        assert enc.decode_tokens_bytes([2**30, 97]) == [b"<|big|>", b"a"]
        assert enc.n_vocab == 2**30 + 1
        try:
            enc.decode([2**30 - 1])
        except KeyError:
            pass
        else:
            raise AssertionError("unused id decoded")
        print("ok")
    """)
    out = run_python(code, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


# -- special-token splitting stays linear; the longest token wins -----------------------------------

def test_special_token_lookalikes_stay_linear():
    from fastbpe.special_tokens import special_token_regex

    specials = {f"<|reserved_{i}|>": 1000 + i for i in range(1000)}
    specials["<|endoftext|>"] = 999
    enc = toy_encoding(special_tokens=specials)
    text = "<|reserved_1x <|reserved_12 <|endoftex <|" * 4000
    ids = enc.encode(text, allowed_special="all")
    assert ids == list(text.encode()) and enc.decode(ids) == text
    assert enc.encode("a<|reserved_12|><|endoftext|>", allowed_special="all") == [97, 1012, 999]
    # a trie shares the common prefixes, so at each place the regex follows one branch per
    # character; a flat alternation (as before) repeats "<\\|reserved_" for every token
    pattern = special_token_regex(frozenset(specials)).pattern
    assert pattern.count("reserved") == 1


def test_longest_special_token_wins():
    enc = toy_encoding(special_tokens={"<|a|>": 300, "<|a|>x": 301, "<|a": 302})
    assert enc.encode("<|a|>x<|a|><|ab", allowed_special="all") == [301, 300, 302, 98]
