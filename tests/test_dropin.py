"""Real tiktoken-using snippets run unchanged after `import fastbpe as tiktoken`.

Each snippet is source text that starts with `import tiktoken` and leaves its answer in
`result`.  It is run twice: as written (real tiktoken, reading the official files from a
populated offline cache) and with the import line replaced by `import fastbpe as tiktoken`.
The results must be equal.
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import pickle
import textwrap

import pytest

import datasources as ds
from conftest import require_encoding


@pytest.fixture(scope="module", autouse=True)
def offline_tiktoken_cache(tmp_path_factory):
    """Real tiktoken's get_encoding() reads the official files from a cache dir we fill."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    ds.populate_tiktoken_cache(cache)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", str(cache))
        yield cache


def run_both(snippet: str, needs=("cl100k_base",)):
    for name in needs:
        require_encoding(name)
    src = textwrap.dedent(snippet)
    assert src.lstrip().startswith("import tiktoken\n")
    real_ns: dict = {}
    exec(compile(src, "<tiktoken snippet>", "exec"), real_ns)
    fb_src = src.replace("import tiktoken\n", "import fastbpe as tiktoken\n", 1)
    fb_ns: dict = {}
    exec(compile(fb_src, "<fastbpe snippet>", "exec"), fb_ns)
    assert fb_ns["tiktoken"].__name__ == "fastbpe"
    assert fb_ns["result"] == real_ns["result"]
    return fb_ns["result"]


COOKBOOK_COUNT = """
import tiktoken

def num_tokens_from_messages(messages, model="gpt-4o-mini-2024-07-18"):
    # the OpenAI cookbook's counting pattern: per-message overhead + encoded fields
    try:
        encoding = tiktoken.encoding_for_model(model)
    except KeyError:
        encoding = tiktoken.get_encoding("o200k_base")
    tokens_per_message, tokens_per_name = 3, 1
    num_tokens = 0
    for message in messages:
        num_tokens += tokens_per_message
        for key, value in message.items():
            num_tokens += len(encoding.encode(value))
            if key == "name":
                num_tokens += tokens_per_name
    return num_tokens + 3

messages = [
    {"role": "system", "content": "You are a helpful, pattern-following assistant."},
    {"role": "system", "name": "example_user", "content": "New synergies will help drive top-line growth."},
    {"role": "system", "name": "example_assistant", "content": "Things working well together will increase revenue."},
    {"role": "user", "content": "This late pivot means we don't have time to boil the ocean for the client deliverable."},
]
result = {m: num_tokens_from_messages(messages, m) for m in
          ["gpt-4o-mini-2024-07-18", "gpt-4o", "gpt-4-0613", "gpt-3.5-turbo-0125", "no-such-model"]}
"""


def test_cookbook_token_counting():
    result = run_both(COOKBOOK_COUNT, needs=("cl100k_base", "o200k_base"))
    assert all(v > 40 for v in result.values())


def test_custom_chat_encoding():
    run_both("""
    import tiktoken
    cl100k_base = tiktoken.get_encoding("cl100k_base")
    enc = tiktoken.Encoding(
        name="cl100k_im",
        pat_str=cl100k_base._pat_str,
        mergeable_ranks=cl100k_base._mergeable_ranks,
        special_tokens={**cl100k_base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
    )
    chat = "<|im_start|>system\\nBe brief.<|im_end|>\\n<|im_start|>user\\nHi there<|im_end|>\\n"
    ids = enc.encode(chat, allowed_special={"<|im_start|>", "<|im_end|>"})
    result = (ids, enc.decode(ids) == chat, enc.n_vocab, enc.max_token_value,
              sorted(enc.special_tokens_set), enc.name)
    """)


def test_encoding_for_model_gpt4o():
    result = run_both("""
    import tiktoken
    enc = tiktoken.encoding_for_model("gpt-4o")
    s = "tiktoken is great! 日本語も 😀"
    result = (enc.name, enc.encode(s), enc.decode(enc.encode(s)) == s, enc.n_vocab)
    """, needs=("o200k_base",))
    assert result[0] == "o200k_base" and result[2]


def test_roundtrip_and_count():
    run_both("""
    import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")
    texts = ["hello world", "", "  spaces  ", "Ünïcödé", "line1\\nline2\\r\\n", "a" * 5000]
    result = [(len(enc.encode(s)), enc.decode(enc.encode(s)) == s) for s in texts]
    """)


def test_truncate_and_chunk():
    run_both("""
    import tiktoken
    encoding = tiktoken.get_encoding("cl100k_base")
    text = " ".join(f"word{i} ünïcode 漢字" for i in range(3000))

    def truncate(text, max_tokens):
        return encoding.decode(encoding.encode(text)[:max_tokens])

    def chunks(text, n):
        ids = encoding.encode(text)
        return [encoding.decode(ids[i:i + n]) for i in range(0, len(ids), n)]

    parts = chunks(text, 512)
    result = (truncate(text, 100), len(parts), "".join(parts) == text)
    """)


def test_visualise_tokens_and_offsets():
    run_both("""
    import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")
    ids = enc.encode("antidisestablishmentarianism 🤖 résumé")
    result = ([enc.decode_single_token_bytes(t) for t in ids], enc.decode_tokens_bytes(ids),
              enc.decode_with_offsets(ids), enc.encode_single_token("hello"))
    """)


def test_special_token_handling():
    run_both("""
    import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")
    doc = "user wrote <|endoftext|> in their text"
    try:
        enc.encode(doc)
        raised = None
    except ValueError as e:
        raised = str(e)
    result = (raised, enc.encode(doc, disallowed_special=()),
              enc.encode(doc, allowed_special={"<|endoftext|>"}), enc.encode(doc, allowed_special="all"),
              enc.eot_token, enc.encode_ordinary(doc), enc.is_special_token(enc.eot_token))
    """)


def test_batch_and_numpy():
    run_both("""
    import tiktoken
    enc = tiktoken.get_encoding("cl100k_base")
    docs = [f"document {i}: " + "text " * (i % 17) for i in range(200)]
    batch = enc.encode_batch(docs, num_threads=4)
    arr = enc.encode_to_numpy(docs[5])
    result = (batch, enc.encode_ordinary_batch(docs), enc.decode_batch(batch) == docs,
              enc.decode_bytes_batch(batch[:3]), arr.dtype.name, arr.tolist())
    """)


def test_model_names_and_listing():
    result = run_both("""
    import tiktoken
    models = ["gpt-4", "gpt-4o", "gpt-4o-2024-05-13", "gpt-3.5-turbo", "text-embedding-3-small",
              "text-davinci-003", "davinci", "gpt2", "o1", "gpt-oss-120b", "ft:gpt-4o:org:custom:id"]
    result = [tiktoken.encoding_name_for_model(m) for m in models]
    """)
    assert result[0] == "cl100k_base"


def test_isinstance_and_names():
    import fastbpe as tiktoken

    require_encoding("cl100k_base")
    enc = tiktoken.get_encoding("cl100k_base")
    assert isinstance(enc, tiktoken.Encoding)
    names = tiktoken.list_encoding_names()
    assert {"gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"} <= set(names)


def test_pickle_named_by_reference():
    import fastbpe

    require_encoding("cl100k_base")
    enc = fastbpe.get_encoding("cl100k_base")
    data = pickle.dumps(enc)
    assert len(data) < 1000, "registered encodings are pickled by name, like tiktoken"
    back = pickle.loads(data)
    assert back.name == "cl100k_base"
    assert back.encode("pickled <|endoftext|>", allowed_special="all") == enc.encode(
        "pickled <|endoftext|>", allowed_special="all")


def test_pickle_custom_encoding():
    import fastbpe

    require_encoding("cl100k_base")
    base = fastbpe.get_encoding("cl100k_base")
    enc = fastbpe.Encoding("custom_pickle", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                           special_tokens={**base._special_tokens, "<|x|>": 100300})
    back = pickle.loads(pickle.dumps(enc))
    assert back.name == "custom_pickle"
    assert back._special_tokens == enc._special_tokens
    assert back.n_vocab == enc.n_vocab == 100301
    text = "custom <|x|> pickle"
    assert back.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert 100300 in back.encode(text, allowed_special="all")


def _encode_in_worker(enc, text):
    return enc.encode(text)


def test_encoding_sent_to_process_pool():
    """The usual multiprocessing pattern: the encoding is pickled to a spawned worker."""
    import fastbpe

    require_encoding("cl100k_base")
    enc = fastbpe.get_encoding("cl100k_base")
    texts = ["first document", "second 文書", "third 😀"]
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        got = list(pool.map(_encode_in_worker, [enc] * len(texts), texts))
    assert got == [enc.encode(t) for t in texts]
