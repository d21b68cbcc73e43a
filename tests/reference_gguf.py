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
