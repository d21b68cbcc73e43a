# cython: language_level=3
"""The C base of hf.Encoding (and gguf's GGUFEncoding): its ids as the kernel gave them, and
hf.Encoding's other fields as C fields, in a type the cyclic garbage collector does not
track (as HF's Rust Encoding is not).  _short_call's ShortCall and lazy_objects set these
fields straight from C."""
cimport cython
from cpython.list cimport PyList_GetSlice
from cpython.object cimport PyObject

from fastbpe._id_output cimport idbuf_to_list
from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf

cdef extern from "Python.h":
    char* PyBytes_AS_STRING(object o)
    Py_ssize_t PyBytes_GET_SIZE(object o)

cdef extern from "Python.h":
    ctypedef void (*freefunc)(void* p)
    ctypedef struct TypeSlots "PyTypeObject":   # the slots untracked_subclass reads and sets
        Py_ssize_t tp_basicsize, tp_itemsize, tp_dictoffset, tp_weaklistoffset
        unsigned long tp_flags
        freefunc tp_free
        void* tp_traverse
        void* tp_clear
        TypeSlots* tp_base
    unsigned long Py_TPFLAGS_HAVE_GC, Py_TPFLAGS_HEAPTYPE
    void PyObject_Free(void* p)
    void PyType_Modified(object t)

cdef tuple _no_ints = ()   # idbuf_to_list's tuple of ints: none (the immortal block, else each made)


cdef list ids_from(object held):
    """A new list of the ids `held`: bytes of the kernel's uint32s (encode_text's as_numpy=2),
    a list, or any other iterable of ints; from bytes built as the kernel builds its lists
    (idbuf_to_list: the immortal ints)."""
    cdef IdBuf b
    if type(held) is list:
        return PyList_GetSlice(held, 0, len(<list>held))
    if type(held) is bytes:
        b.data = <tok_t*>PyBytes_AS_STRING(held)
        b.len = b.cap = PyBytes_GET_SIZE(held) // sizeof(tok_t)
        return idbuf_to_list(&b, _no_ints)
    return list(held)


@cython.auto_pickle(False)   # hf.Encoding pickles itself (its __reduce__)
@cython.final(False)
@cython.no_gc   # its one field holds bytes or a list of ints (EncodingFields says why that is enough)
cdef class EncodingIds:
    """The base of hf.Encoding (and GGUFEncoding): its ids in one C field, as the kernel
    gave them (bytes of uint32s: one allocation, nothing for the cycle collector to count or
    walk, no list to free) or as a list once the pipeline asked for its own (`own_ids`);
    `ids` is a new list each read, as HF's (built from the buffer as the kernel builds its
    lists).  A copy a read from a stored list cost a Qwen2.5 `encode_batch` + `.ids` 18% more
    instructions (a list to copy, free and walk twice), and a Python property ~400
    instructions a short call.  Every reader goes through `ids`, `own_ids()` or len()."""

    @property
    def _ids(self):
        """The ids as held (bytes of uint32s or a list): for constructors and tests; readers
        use `ids`, `own_ids()` or len()."""
        return self.held

    @_ids.setter
    def _ids(self, value):
        self.held = value

    @property
    def ids(self):
        """Read-only, as HF's (AttributeError): see EncodingFields on cycles."""
        return ids_from(self.held)

    cpdef list own_ids(self):
        """The Encoding's own list of ids (made from the buffer once): for the pipeline, which
        changes it in place."""
        held = self.held
        if type(held) is not list:
            held = self.held = ids_from(held)
        return held

    def __len__(self):
        held = self.held
        return PyBytes_GET_SIZE(held) // sizeof(tok_t) if type(held) is bytes else len(held)


@cython.auto_pickle(False)   # hf.Encoding pickles itself (its __reduce__)
@cython.final(False)
@cython.no_gc   # see the class's docstring: nothing it holds can lead back to it
cdef class EncodingFields(EncodingIds):
    """The base of hf.Encoding: its other fields as C fields, so that hf.Encoding (a Python
    subclass with `__slots__ = ()`) is not a type the cyclic collector tracks, as HF's Rust
    Encoding is not.  A tracked Encoding counted toward every collection and was walked by it
    (encode_batch makes one a document, the short call one a call).

    Why no cycle can go through an Encoding, so the collector need not see one: its fields
    are lists of ints, strs, (int, int) tuples and None (every public field is read-only, as
    HF's, and reads give copies: only the pipeline writes fields and changes its own() /
    own_ids() lists in place, with such values), a frozenset of
    ints, a str or an int (`_text`), lists of other Encodings (`_overflowing`), and
    `_pending`: None, a tuple whose first item is hf.ShortSource or ids_path._LazyBatch (they
    hold their tokenizer by a weak reference: the tokenizer makes or freezes them when it
    goes away, see Tokenizer.__del__), or a function over the kernel encoder's tables, which
    hold no Encoding.  None of these refers back to an Encoding.  (Each field is None until
    set; the Python class reads an unset field as None too.)"""


def untracked_subclass(cls):
    """cls, a Python subclass of EncodingFields with `__slots__ = ()`, made a type whose
    instances the cyclic collector does not track (returned, for use as a decorator).
    CPython makes a class statement's instances tracked whatever they hold (3.10-3.13: even
    `class A(int): __slots__ = ()`); EncodingFields says why an Encoding needs no tracking."""
    if not (isinstance(cls, type) and issubclass(cls, EncodingFields)):
        raise TypeError(f"untracked_subclass takes a subclass of EncodingFields, not {cls!r}")
    cdef TypeSlots* t = <TypeSlots*><PyObject*>cls
    cdef TypeSlots* base = t.tp_base
    if not t.tp_flags & Py_TPFLAGS_HEAPTYPE or base.tp_flags & Py_TPFLAGS_HAVE_GC \
            or t.tp_basicsize != base.tp_basicsize or t.tp_itemsize or t.tp_dictoffset or t.tp_weaklistoffset:
        raise TypeError(f"{cls!r} cannot be left untracked: it adds fields (give it __slots__ = ())")
    if t.tp_flags & Py_TPFLAGS_HAVE_GC:
        # as a type PyType_FromSpec made without Py_TPFLAGS_HAVE_GC (subtype_dealloc has its own
        # path for such a heap type); only before any instance exists, which a decorator is
        t.tp_flags &= ~Py_TPFLAGS_HAVE_GC
        t.tp_free = PyObject_Free
        t.tp_traverse = NULL
        t.tp_clear = NULL
        PyType_Modified(cls)
    return cls
