"""`fastbpe show --html`: the page is checked in a real headless browser (Debian's chromium):
it loads without network, has one span per token, and draws the merge tree with JavaScript."""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess

import pytest

import fastbpe
from fastbpe.cli import main
from fastbpe.show_html import display_token, render_page

CORPUS = "the cat sat on the mat. the dog sat on the log.\nlogs and mats and cats.\n" * 200
TEXT = "the cat sat on the log <|eot|> 日本 😀\n  and the dog"


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if path:
            return path
    pytest.skip("no chromium/chrome binary on this machine (apt-get install chromium)")


def _browser(*args: str) -> subprocess.CompletedProcess:
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-extensions", "--disable-background-networking", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("show")
    (d / "c.txt").write_text(CORPUS, encoding="utf-8")
    model = d / "m.json"
    assert main(["train", str(d / "c.txt"), "-v", "300", "-o", str(model), "--special", "<|eot|>",
                 "--no-progress"]) == 0
    return model


def test_page_in_a_headless_browser(trained, tmp_path):
    page = tmp_path / "tokens.html"
    assert main(["show", "-m", str(trained), "--html", str(page), TEXT]) == 0
    enc = fastbpe.load_model(trained).to_encoding()
    ids = enc.encode(TEXT, allowed_special="all")
    source = page.read_text(encoding="utf-8")
    # self-contained: nothing is fetched (the SVG namespace URI is a name, not a fetch)
    assert not re.search(r"""(src|href|url)\s*[=(]\s*["']?\s*(https?:)?//""", source)
    assert "<link" not in source and "import(" not in source
    dom = _browser("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    spans = re.findall(r'<span class="tok"[^>]*data-id="(\d+)"[^>]*title="([^"]*)"', dom.stdout)
    assert [int(i) for i, _ in spans] == ids
    first_title = html.unescape(spans[0][1])
    assert first_title.startswith(f"id {ids[0]} ") and repr(enc.decode_single_token_bytes(ids[0])) in first_title
    assert f"{len(ids)} tokens" in dom.stdout
    # the script ran: a merge tree (an SVG with one node per token in it) and the vocabulary list
    svg = re.search(r"<svg.*?</svg>", dom.stdout, re.S)
    assert svg is not None, "the merge tree was not drawn"
    assert len(re.findall(r'class="node"', svg.group())) >= 3
    assert len(re.findall(r"<li ", dom.stdout)) >= 100
    shot = tmp_path / "tokens.png"
    result = _browser(f"--screenshot={shot}", "--window-size=1000,900", page.as_uri())
    assert result.returncode == 0 and shot.stat().st_size > 5000, result.stderr


def test_page_without_a_merge_list():
    """Named encodings have ranks, not merges: the page shows tokens and counts only."""
    values = [b"hel", b"lo", b" \xe4\xbd", b"\xa0"]
    page = render_page("hello 你", [1, 2, 3, 4], values, name="x</script>")
    assert page.count('class="tok"') == 4 and "Merge tree" not in page
    assert "x</script>" not in page  # names are escaped
    assert display_token(b" \xe4\xbd") == " <e4><bd>" and display_token("日".encode()) == "日"


def test_page_for_a_tokenizer_json(tmp_path):
    """A tokenizer.json's ids are not minbpe's 256 + i: the tree follows the file's own merges
    (left, right, new id), drawn in a real browser."""
    pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers

    import hf_reference

    ref = hf_reference.build(pre_tokenizer=pre_tokenizers.ByteLevel(add_prefix_space=False),
                             byte_level_alphabet=True, vocab_size=600)
    path = tmp_path / "tokenizer.json"
    ref.save(str(path))
    page = tmp_path / "tokens.html"
    text = "the quick brown fox jumps over the lazy dog"
    assert main(["show", "-m", str(path), "--html", str(page), text]) == 0
    ids = ref.encode(text, add_special_tokens=False).ids
    source = page.read_text(encoding="utf-8")
    assert "Merge tree" in source
    # the tree first drawn is that of the longest token of the text (its first, on ties)
    vocab = {i: t for t, i in ref.get_vocab().items()}
    dom = _browser("--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr
    spans = re.findall(r'<span class="tok"[^>]*data-id="(\d+)"', dom.stdout)
    assert [int(i) for i in spans] == ids
    svg = re.search(r"<svg.*?</svg>", dom.stdout, re.S)
    assert svg is not None, "the merge tree was not drawn"
    nodes = re.findall(r'class="node"[^>]*>([^<]*)<', svg.group())
    longest = max(ids, key=lambda i: len(vocab[i]))
    assert nodes and nodes[-1].endswith(f" {longest}")  # children are drawn before their parent
    assert len(nodes) >= 3  # a merged token and its two parts at least
