"""Encode a warm-up 0.5 MB slice, then N further distinct slices (for instruction counts).

    valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*encode_text*' \
        python bench/callgrind_slice.py CORPUS.txt ENCODING N

The count for N=1 minus the count for N=0 is the cost of one distinct slice after warm-up.
"""
import sys

from fastbpe import get_encoding

SLICE = 500_000

text = open(sys.argv[1], encoding="utf-8", errors="ignore").read()
enc = get_encoding(sys.argv[2])
for k in range(int(sys.argv[3]) + 1):
    enc.encode_ordinary(text[k * SLICE:(k + 1) * SLICE])
