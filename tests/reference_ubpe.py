"""A slow, obviously-correct twin of UBPE training (ubpe-native 0.3.0's rules), for the kernel tests.

Each step recounts every adjacent pair (occurrences, and documents containing it), ranks pairs
by (more occurrences, fewer documents, larger pair), takes the best, then each next candidate
that shares no token with those taken and whose border pairs with each taken one are rarer than
it, and replaces the taken pairs left to right in every part.
"""
from __future__ import annotations

from collections import Counter


def fit_merges(docs: list, first_id: int, n_tokens: int, n_candidates: int) -> list:
    """docs: per document its parts (lists of ids).  Returns [(left, right, new id, documents)]."""
    docs = [[list(part) for part in doc] for doc in docs]
    rows = []
    max_token = first_id - 1
    while max_token < n_tokens:
        count, in_docs = Counter(), Counter()
        for doc in docs:
            seen = set()
            for part in doc:
                for pair in zip(part, part[1:]):
                    count[pair] += 1
                    seen.add(pair)
            in_docs.update(seen)
        if not count:
            break
        ranked = sorted(count, key=lambda p: (-count[p], in_docs[p], -p[0], -p[1]))[:n_candidates]
        taken = [ranked[0]]
        for left, right in ranked[1:]:
            if any({left, right} & {a, b} for a, b in taken):
                continue
            n = count[(left, right)]
            if all(count[(right, a)] < n and count[(b, left)] < n for a, b in taken):
                taken.append((left, right))
        new_ids = {}
        for pair in taken:
            max_token += 1
            new_ids[pair] = max_token
            rows.append((pair[0], pair[1], max_token, in_docs[pair]))
        docs = [[_replace(part, new_ids) for part in doc] for doc in docs]
    return rows


def _replace(part: list, new_ids: dict) -> list:
    out, i = [], 0
    while i < len(part):
        if i + 1 < len(part) and (part[i], part[i + 1]) in new_ids:
            out.append(new_ids[(part[i], part[i + 1])])
            i += 2
        else:
            out.append(part[i])
            i += 1
    return out
