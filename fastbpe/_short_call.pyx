# cython: language_level=3
"""A front end's whole short call in one compiled call: a str with no added token in it,
that normalizing leaves as it is -> the kernel's ids -> a lazy result object (hf.Encoding: ids
now, the other fields when first read).

Serving tokenizes many short texts, where the Python around the kernel call (unpacking the
plan, testing the text, building the lazy object) costs as much as the kernel's work.  The
front end builds a ShortCall once per tokenizer and calls it first; None means "take the
general path".  Nothing here knows a front end: the class to make, its three field names and
what goes into them are given by the caller."""
from cpython.unicode cimport PyUnicode_Contains

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object u)

cdef object _new_object = object.__new__


cdef class ShortCall:
    """call(text, flag) -> cls object with its fields set, or None when text is not a str,
    may hold an added token (`first`, the one first character every added token starts
    with, is in it; `checks_added` with no `first`: every text goes the general way), or is
    not ASCII and `changes` = (fn, arg) says the normalizer may change it (fn(text, arg)
    true; None: no normalizer).

    The object: new_object(cls) with ids_field = the ids (wrapped in before/after ids when
    `wraps` gives them for flag), source_field = (owner, text, flag, shape, n, n, None) and
    sequences_field = sequences, where (shape, sequences) = shapes[flag] and n = len(ids)."""
    cdef object encode_text, kind, first, cls, owner, changes_fn, changes_arg
    cdef bint checks_added
    cdef object wraps_false, wraps_true, shapes_false, shapes_true
    cdef str ids_field, source_field, sequences_field

    def __init__(self, encode_text, int kind, bint checks_added, first, wraps, shapes, cls, owner,
                 fields, changes=None):
        self.changes_fn, self.changes_arg = changes if changes is not None else (None, None)
        self.encode_text = encode_text
        self.kind = kind
        self.checks_added = checks_added
        self.first = first
        self.wraps_false = wraps[False] if wraps is not None else None
        self.wraps_true = wraps[True] if wraps is not None else None
        self.shapes_false = shapes[False]
        self.shapes_true = shapes[True]
        self.cls = cls
        self.owner = owner
        self.ids_field, self.source_field, self.sequences_field = fields

    def __call__(self, text, add_special_tokens):
        if type(text) is not str:
            return None
        if not PyUnicode_IS_ASCII(text) and self.changes_fn is not None and self.changes_fn(text, self.changes_arg):
            return None
        if self.checks_added and (self.first is None or PyUnicode_Contains(text, self.first)):
            return None
        cdef bint flag = True if add_special_tokens else False
        ids = self.encode_text(text, self.kind, False)
        wraps = self.wraps_true if flag else self.wraps_false
        if wraps is not None:
            before, after = wraps
            if before or after:
                ids = before + ids + after
        shape, sequences = self.shapes_true if flag else self.shapes_false
        n = len(ids)
        obj = _new_object(self.cls)
        setattr(obj, self.ids_field, ids)
        setattr(obj, self.source_field, (self.owner, text, flag, shape, n, n, None))
        setattr(obj, self.sequences_field, sequences)
        return obj
