"""Every output the transformers patch must keep, for one model folder, as JSON on stdout.

    python tests/transformers_outputs.py FOLDER patched|stock [SAVE_DIR]

Run once patched and once stock, each in its own process (test_transformers_patch.py
compares the two), so neither run sees the other's imports or caches."""
from __future__ import annotations

import json
import os
import sys
import warnings

TEXTS = [
    "Hello world! How are you doing today?",
    "The quick brown fox jumps over the lazy dog. " * 6,
    "Café naïve 日本語のテキスト 🙂 emoji, numbers 1234567 and code: def f(x): return x**2",
    "  leading spaces\tand tabs\nnew lines\r\n",
    "",
]
PAIRS = [("What is the capital of France?", "Paris is the capital and largest city of France. " * 4),
         ("short", "another short one")]
WORDS = [["Hello", "world", "!"], ["Café", "naïve", " spaced", "日本"]]


def _plain(value):
    """BatchEncoding values as JSON-able lists (numpy arrays included)."""
    if hasattr(value, "tolist"):
        return {"ndarray": str(value.dtype), "shape": list(value.shape), "data": value.tolist()}
    if isinstance(value, dict) or hasattr(value, "keys"):
        return {k: _plain(value[k]) for k in sorted(value.keys())}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def outputs(folder: str, save_dir: str | None) -> dict:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)

    def put(key, make):
        """One output, or the error it raises (both runs must raise the same)."""
        try:
            out[key] = make()
        except Exception as e:  # noqa: BLE001 - the error itself is the output compared
            out[key] = {"error": type(e).__name__}

    out = {"class": type(tok).__name__, "backend": type(tok.backend_tokenizer).__module__}
    if tok.pad_token is None:  # padding needs one (gpt2 has none); the same choice in both runs
        if tok.eos_token is not None:
            tok.pad_token = tok.eos_token
        else:
            tok.add_special_tokens({"pad_token": "<|pad|>"})
    put("text", lambda: [_plain(tok(t)) for t in TEXTS])
    put("list", lambda: _plain(tok(TEXTS)))
    put("pairs", lambda: _plain(tok([p[0] for p in PAIRS], [p[1] for p in PAIRS])))
    put("pad_true", lambda: _plain(tok(TEXTS, padding=True)))
    put("pad_max_length", lambda: _plain(tok(TEXTS, padding="max_length", max_length=40, truncation=True)))
    put("trunc_true", lambda: _plain(tok(TEXTS, truncation=True, max_length=12)))
    put("trunc_only_second", lambda: _plain(tok([p[0] for p in PAIRS], [p[1] for p in PAIRS],
                                                truncation="only_second", max_length=24)))
    put("stride_overflow", lambda: _plain(tok(TEXTS[1], truncation=True, max_length=16, stride=4,
                                              return_overflowing_tokens=True)))
    put("offsets", lambda: _plain(tok(TEXTS, return_offsets_mapping=True)))
    put("numpy", lambda: _plain(tok(TEXTS[:2], padding=True, return_tensors="np")))
    put("split_into_words", lambda: _plain(tok(WORDS, is_split_into_words=True)))
    enc = tok(TEXTS[2])
    put("word_ids", lambda: enc.word_ids())
    put("char_to_token", lambda: [enc.char_to_token(i) for i in range(len(TEXTS[2]))])
    ids = tok(TEXTS[0])["input_ids"]
    special = tok.all_special_ids[:1]
    put("decode", lambda: [tok.decode(special + ids, skip_special_tokens=flag) for flag in (False, True)])
    put("batch_decode", lambda: [tok.batch_decode([special + ids, ids], skip_special_tokens=flag)
                                 for flag in (False, True)])
    put("convert_ids_to_tokens", lambda: tok.convert_ids_to_tokens(ids))
    put("tokenize", lambda: tok.tokenize(TEXTS[2]))
    put("vocab_size", lambda: [tok.vocab_size, len(tok)])
    if getattr(tok, "chat_template", None):
        chat = [{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Hi there!"},
                {"role": "assistant", "content": "Hello! How can I help?"}]
        put("chat", lambda: _plain(tok.apply_chat_template(chat, tokenize=True)))
    # transformers 5: special tokens in the text as plain text (the backend's flag, and the
    # stage-by-stage encoding of split_special_tokens / sanitize_control_tokens)
    specials = [t for t in tok.all_special_tokens if t] or ["<|endoftext|>"]
    with_specials = f"Hi {specials[0]} there {specials[-1]}x café {specials[0]}{specials[0]}"
    put("split_special_tokens", lambda: [_plain(tok(with_specials, split_special_tokens=flag)) for flag in (True, False)])
    put("split_special_tokens_batch", lambda: _plain(tok([with_specials, TEXTS[2]], split_special_tokens=True,
                                                         return_offsets_mapping=True)))
    put("tokenize_split_special_tokens", lambda: tok.tokenize(with_specials, split_special_tokens=True))
    put("split_special_tokens_at_load", lambda: _plain(
        AutoTokenizer.from_pretrained(folder, split_special_tokens=True)(with_specials)))
    marked = [{"role": "user", "content": f"Say {specials[0]} and {specials[-1]} literally"},
              {"role": "assistant", "content": f"ok {specials[0]}"}]
    if getattr(tok, "chat_template", None):
        put("chat_sanitized", lambda: _plain(tok.apply_chat_template(marked, tokenize=True, sanitize_control_tokens=True)))
        put("chat_sanitized_dict", lambda: _plain(dict(tok.apply_chat_template(
            marked, tokenize=True, sanitize_control_tokens=True, return_dict=True, truncation=True, max_length=9))))
    put("sanitized_call", lambda: _plain(tok(with_specials, sanitize_control_tokens=True)))
    put("sanitized_call_no_specials", lambda: _plain(tok(with_specials, sanitize_control_tokens=True,
                                                         add_special_tokens=False)))
    added = tok.add_tokens(["<new_tok>", "brandnewword"])
    added_special = tok.add_special_tokens({"additional_special_tokens": ["<|my_special|>"]})
    put("added", lambda: [added, added_special])
    with_added = "x<new_tok>y brandnewword <|my_special|> z"
    put("after_add", lambda: _plain(tok(with_added, return_offsets_mapping=True)))
    put("after_add_decode", lambda: [tok.decode(tok(with_added)["input_ids"], skip_special_tokens=f)
                                     for f in (False, True)])
    if save_dir:
        tok.save_pretrained(save_dir)
        again = AutoTokenizer.from_pretrained(save_dir)
        put("reloaded", lambda: _plain(again(TEXTS + [with_added])))
        put("reloaded_backend", lambda: type(again.backend_tokenizer).__module__)
    return out


def main() -> None:
    folder, mode = sys.argv[1], sys.argv[2]
    save_dir = sys.argv[3] if len(sys.argv) > 3 else None
    warnings.simplefilter("ignore")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if mode == "patched":
        import fastbpe
        fastbpe.patch_transformers()
    json.dump(outputs(folder, save_dir), sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
