"""The numbers of a compiled scanner program's item arrays: item types and quantifier modes
(`pattern_program` writes them, `_scan_program.pyx` reads them as `_scan_types.pxd`'s enums).

A module of their own so that reading a cached program's items at load (`hf/normalizers`'
Replace run, `hf/split_behavior`'s Contiguous test) imports neither `pattern_program` nor
`regex`, `dataclasses` and `inspect` behind it: ~95M instructions of CLIP's load."""

T_CLASS, T_GROUP, T_LOOK, T_NLOOK, T_DOLLAR, T_END = range(6)
GREEDY, LAZY, POSSESSIVE = range(3)
