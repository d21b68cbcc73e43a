"""A slow, obviously-right twin of llama.cpp's SentencePiece BPE (llm_tokenizer_spm):
merge the adjacent pair whose concatenation is a token with the highest score, leftmost on
ties, until none is left; a symbol that is no token becomes its <0xNN> byte tokens."""
from __future__ import annotations


def spm_tokenize(text: str, tokens: list[str], scores: list[float], add_space_prefix: bool = True) -> list[int]:
    if not text:
        return []
    text_to_id = {t: i for i, t in enumerate(tokens)}
    if add_space_prefix:
        text = " " + text
    symbols = list(text.replace(" ", "\u2581"))
    while True:
        best = None
        for k in range(len(symbols) - 1):
            i = text_to_id.get(symbols[k] + symbols[k + 1])
            if i is not None and (best is None or scores[i] > best[0]):
                best = (scores[i], k)
        if best is None:
            break
        k = best[1]
        symbols[k:k + 2] = [symbols[k] + symbols[k + 1]]
    out = []
    for s in symbols:
        if s in text_to_id:
            out.append(text_to_id[s])
        else:
            out.extend(text_to_id[f"<0x{b:02X}>"] for b in s.encode("utf-8"))
    return out


def clean_spaces(text: bytes) -> bytes:
    """llama.cpp's clean_up_tokenization_spaces as its three in-place byte loops."""
    t = bytearray(text)
    # " ?", " !", " .", " ,"
    out = bytearray(t[:1])
    for i in range(1, len(t)):
        if t[i - 1] == 0x20 and t[i] in b"?!.,":
            out.pop()
        out.append(t[i])
    t = out
    # " ' " -> "'" (llama.cpp zeroes the dropped space in place, which the next step sees)
    out = bytearray(t[:1])
    i = 1
    while i < len(t):
        x = t[i]
        if x == 0x27 and i + 1 < len(t) and t[i - 1] == 0x20 and t[i + 1] == 0x20:
            out.pop()
            i += 1
            t[i] = 0
        out.append(x)
        i += 1
    t = out
    # " 's", " 'm", " 're", " 've" lose their space
    out = bytearray(t[:1])
    for i in range(1, len(t)):
        x = t[i]
        if t[i - 1] == 0x20 and x == 0x27 and i + 1 < len(t):
            x1 = t[i + 1]
            if x1 in b"sm" or (i + 2 < len(t) and (t[i + 1:i + 3] in (b"re", b"ve"))):
                out.pop()
        out.append(x)
    return bytes(out)


def bpe_tokenize(word: str, tokens: list[str], merges: list[str], ignore_merges: bool = False) -> list[int]:
    """llama.cpp's llm_tokenizer_bpe_session on one piece (byte-level text): merge the adjacent
    symbols whose texts are a merge with the lowest rank, leftmost on ties (the first of equal
    merges counts), whether or not the result is a token; then each final symbol is its token,
    or each of its bytes looked up as a one-byte text (dropped when absent)."""
    text_to_id = {t: i for i, t in enumerate(tokens)}
    ranks: dict = {}
    for k, m in enumerate(merges):
        c = m.find(" ", 1)
        ranks.setdefault((m[:c], m[c + 1:]) if c > 0 else ("", ""), k)
    if ignore_merges and word in text_to_id:
        return [text_to_id[word]]
    symbols = list(word)
    while True:
        best = None
        for k in range(len(symbols) - 1):
            r = ranks.get((symbols[k], symbols[k + 1]))
            if r is not None and (best is None or r < best[0]):
                best = (r, k)
        if best is None:
            break
        k = best[1]
        symbols[k:k + 2] = [symbols[k] + symbols[k + 1]]
    out = []
    for s in symbols:
        if s in text_to_id:
            out.append(text_to_id[s])
            continue
        for b in s.encode("utf-8", "surrogateescape"):
            i = text_to_id.get(chr(b) if b < 0x80 else chr(0xDC00 + b))
            if i is not None:
                out.append(i)
    return out
