"""Runs cases on the reference `ubpe_native` (under Python >= 3.12) and prints the results as JSON.

Input (stdin): a JSON list of cases, each
  {"cls": "UBPE" | "UBPEClassic", "init": {...constructor keywords...}, "fit": {...} | null,
   "corpus": [...], "load": <dumps() string> | null, "token_type": "int" | "str",
   "encode": [doc, ...], "top_n": [n, ...]}
Output: per case {"dump": dumps(), "encodings": [[encode(doc[, top_n=n]) for n] for doc],
"decoded": [decode(best ids) for doc]}, plus wall and CPU seconds of fit and of all encodes.  Used by tests/test_ubpe_parity.py and bench/bench_ubpe.py.
"""
import json
import sys
import time


def run_case(case, ubpe_native):
    cls = getattr(ubpe_native, case["cls"])
    t0, c0 = time.perf_counter(), time.process_time()
    if case.get("load"):
        model = cls.loads(case["load"], token_type={"int": int, "str": str}[case.get("token_type", "int")])
    else:
        init = dict(case["init"])
        for key in ("known_words",):
            if init.get(key) and isinstance(init[key][0], list):
                init[key] = [tuple(w) for w in init[key]]
        model = cls(**init)
        model.fit(case["corpus"], **case.get("fit", {}))
    fit_time, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    encodings, decoded = [], []
    t0, c0 = time.perf_counter(), time.process_time()
    for doc in case["encode"]:
        per_n = []
        for n in case.get("top_n", [1]):
            per_n.append(model.encode(doc, top_n=n) if case["cls"] == "UBPE" else model.encode(doc))
        encodings.append(per_n)
    encode_time, encode_cpu = time.perf_counter() - t0, time.process_time() - c0
    for per_n in encodings:
        ids = per_n[0][0][0]
        decoded.append(model.decode(ids) if ids else None)
    return {"dump": model.dumps(), "encodings": encodings, "decoded": decoded,
            "fit_time": fit_time, "encode_time": encode_time, "fit_cpu": fit_cpu, "encode_cpu": encode_cpu}


def main():
    import ubpe_native

    cases = json.load(sys.stdin)
    results = []
    for case in cases:
        try:
            results.append(run_case(case, ubpe_native))
        except Exception as e:      # the reference fails on some inputs (e.g. empty parts)
            results.append({"error": f"{type(e).__name__}: {e}"})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
