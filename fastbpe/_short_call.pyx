# cython: language_level=3
"""A front end's whole short call in one compiled call: a str with no added token in it,
that normalizing leaves as it is -> the kernel's ids -> a lazy result object (hf.Encoding: ids
now, the other fields when first read).

Serving tokenizes many short texts, where the Python around the kernel call (unpacking the
plan, testing the text, building the lazy object) costs as much as the kernel's work.  The
front end builds a ShortCall once per tokenizer and calls it first; None means "take the
general path".  Nothing here knows a front end: the class to make, its three field names and
what goes into them are given by the caller.  `CompiledEncode` makes hf.Tokenizer's `encode`
a C method that calls it; `OrdinaryCall` does the same for tiktoken's `Encoding.encode_ordinary`."""
cimport cython
from array import array
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libc.string cimport memchr, memset

from fastbpe._added_split import encode_cut_texts
from fastbpe._core cimport BPETable
from fastbpe._encoding_base cimport EncodingFields, EncodingIds, ids_from
from fastbpe._normalize cimport Program
from fastbpe._token_trie cimport TokenTrie
from fastbpe._vocab cimport tok_t

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object u)
    void* PyUnicode_DATA(object u)
    Py_ssize_t PyUnicode_GET_LENGTH(object u)
    Py_UCS4 PyUnicode_READ_CHAR(object u, Py_ssize_t index)
    int PyUnicode_KIND(object u)
    Py_ssize_t PyUnicode_FindChar(object u, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef* d_member
    PyTypeObject PyMemberDescr_Type
    bint PyObject_TypeCheck(object o, PyTypeObject* t)

cdef extern from *:
    """
    /* cls.__new__(cls) without __init__, through the type's own tp_new (an EncodingIds
       subclass's sets its C field to None; object's takes the empty arguments) */
    static PyObject* fb_new_instance(PyObject* cls, PyObject* no_args) {
        PyTypeObject* t = (PyTypeObject*)cls;
        return t->tp_new(t, no_args, NULL);
    }
    """
    object fb_new_instance(object cls, object no_args)

cdef object _new_object = object.__new__
cdef tuple _no_args = ()
cdef Py_ssize_t HELD = -3   # the ids field is EncodingIds' C field (see ids_offset)
cdef Py_ssize_t PENDING = -4, SEQUENCES = -5, TEXT = -6   # EncodingFields' C fields (field_offset)


cdef Py_ssize_t ids_offset(cls, str name) except -2:
    """slot_offset of the ids field, or HELD: EncodingIds' own `_ids` (set in C, the kernel's
    bytes)."""
    if name == "_ids" and isinstance(cls, type) and issubclass(cls, EncodingIds):
        return HELD
    return slot_offset(cls, name)


cdef Py_ssize_t field_offset(cls, str name) except -2:
    """slot_offset of a field, or PENDING / SEQUENCES / TEXT: EncodingFields' own C fields."""
    if isinstance(cls, type) and issubclass(cls, EncodingFields):
        if name == "_pending":
            return PENDING
        if name == "_sequences":
            return SEQUENCES
        if name == "_text":
            return TEXT
    return slot_offset(cls, name)


cdef extern from "structmember.h":
    int T_OBJECT_EX          # a __slots__ field: an object pointer, unset while NULL
    int READONLY


cdef Py_ssize_t slot_offset(cls, str name) except -2:
    """Where instances of cls keep the __slots__ field `name` (its member descriptor's
    offset), or -1 when it is not such a field (then setattr sets it): a writable object
    field of cls or a base of it, nothing else (another type's offset would be wrong here)."""
    desc = getattr(cls, name, None)
    if desc is None or not PyObject_TypeCheck(desc, &PyMemberDescr_Type) \
            or not (isinstance(cls, type) and issubclass(cls, desc.__objclass__)):
        return -1
    cdef PyMemberDef* member = (<PyMemberDescrObject*><PyObject*>desc).d_member
    if member.type != T_OBJECT_EX or member.flags & READONLY:
        return -1
    return member.offset


cdef inline int set_field(object obj, Py_ssize_t offset, str name, object value) except -1:
    """obj.name = value: straight into its slot when offset >= 0 (what the member
    descriptor does, without looking the name up on every call), into EncodingIds' C field
    when HELD."""
    cdef PyObject** field
    cdef PyObject* old
    if offset == HELD:
        (<EncodingIds>obj).held = value
        return 0
    if offset == PENDING:
        (<EncodingFields>obj)._pending = value
        return 0
    if offset == SEQUENCES:
        (<EncodingFields>obj)._sequences = value
        return 0
    if offset == TEXT:
        (<EncodingFields>obj)._text = value
        return 0
    if offset < 0:
        setattr(obj, name, value)
        return 0
    field = <PyObject**>(<char*><PyObject*>obj + offset)
    old = field[0]
    Py_INCREF(value)
    field[0] = <PyObject*>value
    Py_XDECREF(old)
    return 0


cdef inline bint has_char(str text, Py_UCS4 ch) except -1:
    """ch in text: an ASCII str is one byte a character (memchr on its data, no copy; what
    `in` costs around it was ~100 of a short call's instructions)."""
    if PyUnicode_IS_ASCII(text):
        return ch < 128 and memchr(PyUnicode_DATA(text), <int>ch, PyUnicode_GET_LENGTH(text)) != NULL
    return PyUnicode_FindChar(text, ch, 0, PyUnicode_GET_LENGTH(text), 1) >= 0


cdef object one_char(object first):
    """first, checked: None or a one-character str (what has_char reads)."""
    if first is not None and (type(first) is not str or len(first) != 1):
        raise ValueError(f"an added token's first character must be one character, not {first!r}")
    return first


cdef enum:
    MAX_FIRSTS = 16   # first characters a plain test takes (hf/added_tokens.py's _MAX_FIRSTS)


cdef object first_chars(object firsts):
    """firsts, checked: None or a str of 1-16 characters, each one an added token may start with."""
    if firsts is not None and (type(firsts) is not str or not 1 <= len(firsts) <= MAX_FIRSTS):
        raise ValueError(f"added tokens' first characters must be a str of 1 to 16, not {firsts!r}")
    return firsts


cdef bint has_any(str text, str chars) except -1:
    """Some character of chars (1-16) is in text: a memchr a character on an ASCII str (a
    GLM-4/Qwen3.5 file's tokens start with "[" or "<": 214 of 245 English 2 kB documents hold
    neither; a non-ASCII first character is never in one); on another str, up to 4 searches,
    else one pass over its code units against a bitmap (DeepSeek-LLM's tokens start with
    "[", "<" and eleven Latin-1 letters)."""
    cdef Py_ssize_t i, j, n = PyUnicode_GET_LENGTH(chars), length, nbig = 0
    cdef Py_UCS4 c
    cdef Py_UCS4 big[MAX_FIRSTS]
    cdef uint8_t small[256]
    cdef int kind
    cdef const void* data
    if n <= 4 or PyUnicode_IS_ASCII(text):
        for i in range(n):
            if has_char(text, PyUnicode_READ_CHAR(chars, i)):
                return True
        return False
    memset(small, 0, sizeof(small))
    for i in range(n):
        c = PyUnicode_READ_CHAR(chars, i)
        if c < 256:
            small[c] = 1
        else:
            big[nbig] = c
            nbig += 1
    kind, data, length = PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)
    if kind == 1:
        for i in range(length):
            if small[(<const uint8_t*>data)[i]]:
                return True
        return False
    for i in range(length):
        c = (<const uint16_t*>data)[i] if kind == 2 else (<const uint32_t*>data)[i]
        if c < 256:
            if small[c]:
                return True
        elif nbig:
            for j in range(nbig):
                if big[j] == c:
                    return True
    return False


cdef object token_tries(object tries):
    """tries, checked: None or a tuple of 1-2 TokenTries (what holds_token searches)."""
    if tries is not None and (type(tries) is not tuple or not 1 <= len(tries) <= 2
                              or not all(type(t) is TokenTrie for t in tries)):
        raise ValueError(f"added tokens' automata must be a tuple of 1 or 2 TokenTries, not {tries!r}")
    return tries


cdef inline bint holds_token(str text, str firsts, tuple tries) except -1:
    """An added token may be in text: one of `firsts` (every token's first character) is in it
    and, with `tries` (the tokens' automata), one of them finds a token in it.  Phi-2's and
    GPT-NeoX's tokens are runs of spaces and tabs: every text with a space held a first
    character and took the general way (~36,000-100,000 instructions a 100-character call)."""
    if not has_any(text, firsts):
        return False
    return tries is None or tries_find(text, tries)


cdef bint tries_find(str text, tuple tries) except -1:
    """One of the automata finds a token in text."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), s, e, steps = 0
    cdef int64_t v
    for trie in tries:
        (<TokenTrie>trie).search_at(PyUnicode_KIND(text), PyUnicode_DATA(text), n, 0, &s, &e, &v, &steps)
        if s >= 0:
            return True
    return False


cdef inline bint is_plain(object text, bint checks_added, object firsts, object tries, object changes_fn,
                          object changes_arg) except -1:
    """text is an exact str that may hold no added token (holds_token(text, firsts, tries) false:
    `firsts` the characters every added token starts with; with `checks_added` and no `firsts`,
    never) and that normalizing leaves as it is (ASCII, or changes_fn(text, changes_arg) false)."""
    if type(text) is not str:
        return False
    if not PyUnicode_IS_ASCII(text) and changes_fn is not None and changes_fn(text, changes_arg):
        return False
    if checks_added and (firsts is None or holds_token(<str>text, <str>firsts, <tuple>tries)):
        return False
    return True


def plain_texts(list texts, bint checks_added, firsts, changes=None):
    """Which texts a front end may hand to the kernel as they are (see is_plain; firsts: None
    or a str of 1-16 first characters; changes = (fn, arg) or None): a batch's per-text checks
    in one compiled loop, a list of bools.  (A text holding a first character is cut, its
    tokens found by the automaton there: searching it here too would search twice.)"""
    changes_fn, changes_arg = changes if changes is not None else (None, None)
    firsts = first_chars(firsts)
    return [is_plain(text, checks_added, firsts, None, changes_fn, changes_arg) for text in texts]


def plain_normalized(list texts, Program program, str firsts, raw_firsts):
    """For each text (a str), its normalized text when it holds no added token, else None: none
    of `raw_firsts` (None: no raw token) in the text and none of `firsts` (the normalized
    tokens') in its normalized text, as HF finds raw tokens, then normalized ones after
    normalizing.  A text holding one of `firsts` already is not normalized (a guess that it
    keeps it; None is always right: the caller cuts it); an ASCII text a program leaves alone
    as itself (Qwen3.5's NFC: 214 of 245 English 2 kB documents hold neither "[" nor "<")."""
    firsts = first_chars(firsts)
    raw_firsts = first_chars(raw_firsts)
    out = [None] * len(texts)
    for i, text in enumerate(texts):
        if type(text) is not str or has_any(<str>text, firsts) \
                or (raw_firsts is not None and has_any(<str>text, <str>raw_firsts)):
            continue
        done = text if program.ascii_stable and PyUnicode_IS_ASCII(text) else program.normalize(text)
        if not has_any(done, firsts):
            out[i] = done
    return out


def lazy_objects(cls, fields, list bodies, list indexes, maker, flag, shape, sequences, wraps=None):
    """For each body (a list of ids or the kernel's bytes of them) and its index, what `ShortCall.make`
    makes for one call (with `wraps`, (before, after) ids: the body wrapped in them, as its):
    new_object(cls) with ids_field = body, source_field = (maker, index, flag, shape, n, n,
    None) (n = len(body)) and sequences_field = sequences, set straight into cls's __slots__.
    With a fourth field (the text field, as ShortCall's), the source is one tuple for the
    batch, (maker, None, flag, shape, None, None, None), and the index goes in the text field
    (the Encoding reads it there and n = len(ids), as a short call's): a 7-tuple and an int a
    body were ~400 instructions and one more object for the collector to count.
    A batch's Encodings (hf encode_batch): made by a Python function a text, they cost ~4,000
    instructions of a 2 kB document's ~104,000, a third of that the call and the setattrs."""
    cdef Py_ssize_t i, n = len(bodies)
    cdef object count
    if len(indexes) != n:
        raise ValueError("lazy_objects needs one index a body")
    if len(fields) == 4:
        ids_field, source_field, sequences_field, text_field = fields
    else:
        (ids_field, source_field, sequences_field), text_field = fields, None
    cdef Py_ssize_t ids_at = ids_offset(cls, ids_field), source_at = field_offset(cls, source_field)
    cdef Py_ssize_t sequences_at = field_offset(cls, sequences_field)
    cdef Py_ssize_t text_at = field_offset(cls, text_field) if text_field is not None else -1
    cdef bint slots = ids_at >= 0 or ids_at == HELD
    cdef tuple shared = (maker, None, flag, shape, None, None, None) if text_field is not None else None
    held = held_wraps(wraps)
    out = [None] * n
    for i in range(n):
        body = bodies[i]
        if held is not None:
            body = wrapped(held, body)
        obj = fb_new_instance(cls, _no_args) if slots else _new_object(cls)
        set_field(obj, ids_at, ids_field, body)
        if shared is not None:
            set_field(obj, source_at, source_field, shared)
            set_field(obj, text_at, text_field, indexes[i])
        else:
            count = len(body)   # (one int object, twice in the source)
            set_field(obj, source_at, source_field, (maker, indexes[i], flag, shape, count, count, None))
        set_field(obj, sequences_at, sequences_field, sequences)
        out[i] = obj
    return out


cdef object wrapped(tuple held, object ids):
    """ids (bytes of uint32s or a list) between held_wraps' before and after."""
    before, after = held
    if type(before) is type(ids):
        return before + ids + after
    return ids_from(before) + ids_from(ids) + ids_from(after)


cdef object held_wraps(object wraps):
    """(before, after) ids as bytes of uint32s for ShortCall.held, or None when both are
    empty; a wrap id outside 0..2^32-1 (never a real one) takes a list-of-ids wrap instead."""
    if wraps is None or not (wraps[0] or wraps[1]):
        return None
    try:
        before, after = array("I", wraps[0]), array("I", wraps[1])
        if before.itemsize == sizeof(tok_t):
            return before.tobytes(), after.tobytes()
    except OverflowError:
        pass
    return list(wraps[0]), list(wraps[1])


@cython.final   # its cdef methods called directly (CompiledEncode's short call: no vtable, inlined)
cdef class ShortCall:
    """call(text, flag) -> cls object with its fields set, or None when text is not a str,
    may hold an added token (holds_token(text, first, tries): `first` the 1-16 characters every
    added token starts with, `tries` None or the tokens' automata, searched when one of those is
    in text; `checks_added` with no `first`: every text goes the general way), or is not ASCII
    and `changes` = (fn, arg) says the normalizer may change it (fn(text, arg) true; None: no
    normalizer).  With `normalize` (a _normalize.Program), the kernel encodes
    normalize.normalize(text) (the source keeps text: its other fields come from it); with
    `normalized_first` (and `normalized_tries`), the tokens HF matches after normalizing
    (Qwen3.5's, GPT-NeoX's), a normalized text that may hold one goes the general way too.

    The object: new_object(cls) with ids_field = the ids (wrapped in before/after ids when
    `wraps` gives them for flag), source_field = (owner, None, flag, shape, None, None, None),
    sequences_field = sequences and text_field = text, where (shape, sequences) = shapes[flag]:
    the source is one tuple a flag, made here once, so the object's maker finds the text in
    text_field and n = len(ids) (a tuple a call was ~265 of a Qwen2.5 call's ~8,760
    instructions); `results_alive` says whether any such object is still alive.
    The ids are table.encode_text(text, kind), called in C (bytes of uint32s when cls is
    an EncodingIds with ids_field "_ids": its C field holds them); the fields, when cls keeps them
    in __slots__, are set straight into their slots (a short call makes one object: the
    name lookups of setattr and a Python-level call cost as much as a fifth of it)."""
    cdef BPETable table
    cdef object first, cls, changes_fn, changes_arg
    cdef readonly object owner   # what goes first in the source tuple
    cdef int kind
    cdef bint checks_added
    cdef object tries, normalized_first, normalized_tries, cut
    cdef object wraps_false, wraps_true
    cdef object held_false, held_true   # the wraps as arrays (HELD), or None: no wraps
    cdef tuple shapes_false, shapes_true
    cdef str ids_field, source_field, sequences_field, text_field
    cdef Py_ssize_t ids_at, source_at, sequences_at, text_at
    cdef tuple pending_false, pending_true   # the source_field of every object made, by flag
    cdef Program normalize

    def __init__(self, BPETable table, int kind, bint checks_added, first, wraps, shapes, cls, owner,
                 fields, changes=None, Program normalize=None, tries=None, normalized_first=None,
                 normalized_tries=None, cut=None):
        self.changes_fn, self.changes_arg = changes if changes is not None else (None, None)
        self.tries = token_tries(tries)
        self.normalized_first = first_chars(normalized_first)
        self.normalized_tries = token_tries(normalized_tries)
        if cut is not None and (type(cut) is not tuple or len(cut) != 2 or changes is not None
                                or not all(t is None or type(t) is TokenTrie for t in cut)):
            raise ValueError(f"cut must be (raw TokenTrie or None, normalized TokenTrie or None), without changes")
        self.cut = cut
        self.normalize = normalize
        self.table = table
        self.kind = kind
        self.checks_added = checks_added
        self.first = first_chars(first)
        self.wraps_false = wraps[False] if wraps is not None else None
        self.wraps_true = wraps[True] if wraps is not None else None
        self.shapes_false = tuple(shapes[False])
        self.shapes_true = tuple(shapes[True])
        self.cls = cls
        self.owner = owner
        self.ids_field, self.source_field, self.sequences_field, self.text_field = fields
        self.ids_at = ids_offset(cls, self.ids_field)
        self.held_false = self.held_true = None
        if self.ids_at == HELD:
            self.held_false = held_wraps(self.wraps_false)
            self.held_true = held_wraps(self.wraps_true)
        self.source_at = field_offset(cls, self.source_field)
        self.sequences_at = field_offset(cls, self.sequences_field)
        self.text_at = field_offset(cls, self.text_field)
        self.pending_false = (owner, None, False, self.shapes_false[0], None, None, None)
        self.pending_true = (owner, None, True, self.shapes_true[0], None, None, None)

    def results_alive(self):
        """Whether an object this call made may still be alive: something besides this call
        holds one of its source tuples (hf: the tokenizer keeps a copy of itself for them
        before it changes)."""
        return (<PyObject*>self.pending_false).ob_refcnt > 1 or (<PyObject*>self.pending_true).ob_refcnt > 1

    def __call__(self, text, add_special_tokens):
        return self.make(text, True if add_special_tokens else False)

    cdef inline object plain(self, object text):
        """The text the kernel encodes (text normalized), or None when text goes the general way."""
        if not is_plain(text, self.checks_added, self.first, self.tries, self.changes_fn, self.changes_arg):
            return None
        done = text if self.normalize is None else self.normalize.normalize(text)
        if self.normalized_first is not None and holds_token(done, self.normalized_first, self.normalized_tries):
            return None
        return done

    cdef object cut_ids(self, object text, bint as_bytes):
        """The ids of an exact str that may hold an added token, cut at its tokens inside one
        kernel call (`cut`: the raw and normalized automata, as a batch's cut), or None without
        `cut` (Phi-2's texts holding a run of spaces paid ~60,000 instructions of Python for it)."""
        if self.cut is None or type(text) is not str:
            return None
        return encode_cut_texts(self.table, self.kind, self.cut[0], self.cut[1], [text], self.normalize,
                                as_bytes)[0]

    cdef inline object bare_ids(self, object text, bint as_bytes):
        """The text's ids without the post-processor's wraps: a list, or bytes of uint32s
        (as_bytes); None where the short call does not apply."""
        done = self.plain(text)
        if done is None:
            return self.cut_ids(text, as_bytes)
        return self.table.encode_text(done, self.kind, 2 if as_bytes else False)

    cdef object ids(self, object text, bint flag):
        """The ids of the object `make` would make (None the same way): a caller that wants
        only ids (hf.Tokenizer.encode_ids) skips the object."""
        ids = self.bare_ids(text, False)
        if ids is None:
            return None
        wraps = self.wraps_true if flag else self.wraps_false
        if wraps is not None:
            before, after = wraps
            if before or after:
                ids = before + ids + after
        return ids

    cdef object held(self, object text, bint flag):
        """`ids` as bytes of uint32s, for an EncodingIds' C field."""
        ids = self.bare_ids(text, True)
        if ids is None:
            return None
        wraps = self.held_true if flag else self.held_false
        return ids if wraps is None else wrapped(wraps, ids)

    cdef object make(self, object text, bint flag):
        """__call__ for a caller in C (CompiledEncode): no argument tuple, no Python call."""
        ids = self.held(text, flag) if self.ids_at == HELD else self.ids(text, flag)
        if ids is None:
            return None
        obj = fb_new_instance(self.cls, _no_args) if self.ids_at >= 0 or self.ids_at == HELD \
            else _new_object(self.cls)
        set_field(obj, self.ids_at, self.ids_field, ids)
        set_field(obj, self.source_at, self.source_field, self.pending_true if flag else self.pending_false)
        set_field(obj, self.sequences_at, self.sequences_field, (self.shapes_true if flag else self.shapes_false)[1])
        set_field(obj, self.text_at, self.text_field, text)
        # hf.Encoding is not a type the cycle collector tracks (EncodingFields): its source
        # refers to the tokenizer only weakly (hf.ShortSource), so an Encoding kept on the
        # tokenizer (`tok.last = tok.encode(s)`) is no cycle (tests/test_hf_fast_path).
        return obj


cdef class OrdinaryCall:
    """What CompiledOrdinary's `encode_ordinary` and `encode` read from its `_compiled` field
    (None: every call takes the Python way): the table and the C scanner's
    kind, for an encoding whose pattern the C scanner knows and whose table takes every str;
    `firsts`, the special tokens' first characters as one-character strs (None: encode takes
    the Python way)."""
    cdef BPETable table
    cdef int kind
    cdef object firsts

    def __init__(self, BPETable table, int kind, firsts=None):
        self.table = table
        self.kind = kind
        self.firsts = None if firsts is None else tuple(one_char(first) for first in firsts)

    cdef bint plain(self, str text, allowed_special, disallowed_special) except -1:
        """encode's rules leave text ordinary: nothing allowed, and nothing checked, or the
        default check and none of the special tokens' first characters in text."""
        if self.firsts is None or allowed_special or type(allowed_special) is str:
            return False
        if disallowed_special is None or (not disallowed_special and type(disallowed_special) is not str):
            return True
        if type(disallowed_special) is not str or disallowed_special != "all":
            return False
        for first in self.firsts:
            if has_char(text, PyUnicode_READ_CHAR(first, 0)):
                return False
        return True


@cython.auto_pickle(False)   # the subclass pickles itself (fastbpe.Encoding.__getstate__)
cdef class CompiledOrdinary:
    """The base of fastbpe.Encoding whose C methods are tiktoken's `encode_ordinary` and
    `encode` (a subclass's own methods win): a short call is one C call that reads the
    `_compiled` field (an OrdinaryCall; None: the Python way, `_encode_ordinary` / `_encode`).
    The Python methods' frames, attribute loads and argument handling were ~1,900 of ~8,000
    instructions of a 100-character encode_ordinary, and ~10,600 of ~18,000 of an encode
    (its special-token check).  `_compiled` is a C field (a Python attribute all the same)."""
    cdef public object _compiled

    def encode_ordinary(self, text):
        """Encode text, treating special-token text as ordinary text.

        >>> enc.encode_ordinary("hello world")
        [31373, 995]
        """
        call = self._compiled
        if type(call) is OrdinaryCall and type(text) is str:
            try:
                return (<OrdinaryCall>call).table.encode_text(text, (<OrdinaryCall>call).kind, False)
            except UnicodeEncodeError:
                pass
        return self._encode_ordinary(text, False)

    def encode(self, text, *, allowed_special=frozenset(), disallowed_special="all", dropout=None, seed=None):
        """Encode text, with tiktoken's special-token rules.

        Special-token text listed in `allowed_special` becomes its special token; text of a
        token in `disallowed_special` (by default every special token not allowed) raises
        ValueError; any other text is encoded as ordinary text.  `dropout=p` skips each merge
        with probability p (BPE-dropout, reproducible with `seed`; see fastbpe/alternatives.py).

        >>> enc.encode("hello world")
        [31373, 995]
        """
        call = self._compiled
        if type(call) is OrdinaryCall and type(text) is str and dropout is None \
                and (<OrdinaryCall>call).plain(text, allowed_special, disallowed_special):
            try:
                return (<OrdinaryCall>call).table.encode_text(text, (<OrdinaryCall>call).kind, False)
            except UnicodeEncodeError:
                pass
        return self._encode(text, allowed_special, disallowed_special, dropout, seed)

@cython.auto_pickle(False)   # hf.Tokenizer pickles itself (its __reduce__)
cdef class CompiledEncode:
    """The base of `hf.Tokenizer` that makes HF's `Tokenizer.encode(sequence, pair=None,
    is_pretokenized=False, add_special_tokens=True)` a C method: a single str sequence goes
    to the tokenizer's ShortCall (`_short[7]`, the short-call plan that the tokenizer sets to
    None whenever it changes); anything else, or no plan yet, to the Python `_encode(sequence,
    pair, is_pretokenized, add_special_tokens)`, which makes the plan.

    A short call is then one C method call, found by the interpreter's specialised method
    lookup: a Python `encode` that only called the ShortCall cost ~1,300 of ~11,000
    instructions of a 100-character `encode(s).ids` (its frame, the ShortCall's Python-level
    call).  `_short` is a C field (a Python attribute of the tokenizer all the same).
    `encode_ids` the same way (the Python one, `_encode_ids`, also makes the plan)."""
    cdef public object _short

    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        """HF's Tokenizer.encode: ids, tokens, offsets (characters), masks, type ids.  With
        is_pretokenized, sequence (and pair) are lists of words: each word is tokenized on
        its own, its tokens take the word's index as word id and offsets within the word."""
        plan = self._short
        if type(plan) is tuple and pair is None and not is_pretokenized:
            enc = (<ShortCall>(<tuple>plan)[7]).make(sequence, True if add_special_tokens else False)
            if enc is not None:
                return enc
        return self._encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_ids(self, text, add_special_tokens=True):
        """`encode(text, add_special_tokens=...).ids`, without building an Encoding."""
        plan = self._short
        if type(plan) is tuple:
            ids = (<ShortCall>(<tuple>plan)[7]).ids(text, True if add_special_tokens else False)
            if ids is not None:
                return ids
        return self._encode_ids(text, add_special_tokens)
