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
