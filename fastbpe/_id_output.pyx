# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A call's ids (an IdBuf) as what Python gets back: a list of ints made from ready int
objects, a numpy uint32 array copied once, or an array.array('I') (no numpy import).

The ready ints are one process-wide block of immortal int objects (`id_ints`): the int i
lives at a fixed address (base + i * 32), so a list's item is computed from the id, with no
read of a table of ints and no reference count written in a random int object per id (that
was ~2/3 of building the list: 0.65 -> 0.15 ms for 120k ids of 0.5 MB of English, measured).
The ints are equal to CPython's but not the same objects: `ids[0] is 5` is False even for
the small ints -5 .. 256 that CPython caches (compare ids with ==, as `is` on ints never
promised anything).
"""
from array import array
from cpython cimport array as carray
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF, PyObject
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

from fastbpe._vocab cimport tok_t
from fastbpe._workspace cimport IdBuf

cdef extern from "Python.h":
    ctypedef struct PyListObject:
        PyObject** ob_item
        Py_ssize_t allocated
    void Py_SET_SIZE(object o, Py_ssize_t n)
    void* PyMem_Malloc(size_t n)
    PyObject** PySequence_Fast_ITEMS(object o)   # a tuple's (or list's) item array
    PyObject* PyLong_FromUnsignedLong(unsigned long v)
    void PyObject_GC_UnTrack(object o)


cdef extern from "Python.h":   # (C for CPython's headers: not with the portable C blocks)
    """
    /* Immortal id ints.  The ints 0 .. fb_id_count - 1 as int objects FB_ID_STRIDE bytes apart
       in one block that is never freed (a list anywhere may hold them): each is a copy of
       CPython's own int object of a one-digit value with its digit set, checked byte for
       byte against the int CPython makes for sample values before the block is used (any
       difference, and the block is not used: the ints come from a tuple as before).  Their
       reference count is CPython's immortal value where it has one (3.12+: references are
       then never counted), else 2^60 (3.9-3.11 on 64-bit: a list of ids takes no reference,
       so freeing lists counts it down; reaching zero would take 2^60 freed items).  Not in
       the limited API, PyPy, or a free-threaded build (another reference-count layout), nor
       on 32-bit below 3.12: there the count could only start at 2^30, and ~1e9 freed items
       holding one id would bring it to zero (CPython would free memory inside the block).
       At most FB_ID_MAX ints (128 MB): ids past the block are made as ints per call. */
    #if defined(PYPY_VERSION) || defined(Py_LIMITED_API) || defined(Py_GIL_DISABLED)
    #define FB_ID_INTS 0
    #elif PY_VERSION_HEX < 0x030C0000 && SIZEOF_VOID_P < 8
    #define FB_ID_INTS 0
    #else
    #define FB_ID_INTS 1
    #endif
    #define FB_ID_STRIDE 32
    #define FB_ID_MAX ((Py_ssize_t)1 << 22)
    static char* fb_id_base = NULL;
    static Py_ssize_t fb_id_count = 0;
    static int fb_id_off = !FB_ID_INTS;   /* 1: the block is not used */

    static int fb_id_same(const char* ours, PyObject* real, size_t size) {
        /* ours is the int real is, but for the reference count (the first field) */
        return memcmp(ours + sizeof(Py_ssize_t), (const char*)real + sizeof(Py_ssize_t),
                      size - sizeof(Py_ssize_t)) == 0;
    }

    /* Make the block hold at least the ints 0 .. min(n, FB_ID_MAX) - 1 (with the GIL).  0, or
       -1 with MemoryError set.  A bigger block replaces the one before, which stays (its ints
       may be in lists); either way an id's int has the value of the id.  Blocks grow at least
       twofold, so those kept total less than twice the last (three times when the last is
       the capped FB_ID_MAX). */
    static int fb_id_ints_reserve(Py_ssize_t n) {
    #if FB_ID_INTS
        static const long samples[] = {0, 1, 2, 255, 256, 257, 1000, 32767, 32768, 65535, 65536, 100000};
        PyObject *zero, *tmpl, *real;
        Py_ssize_t count, i, k;
        size_t size;
        char* base;
        Py_ssize_t rc;
        int ok = 1;
        if (n > FB_ID_MAX)
            n = FB_ID_MAX;
        if (fb_id_off || n <= fb_id_count)
            return 0;
        count = (n + 4095) & ~(Py_ssize_t)4095;
        if (count < 2 * fb_id_count)
            count = 2 * fb_id_count;
        if (count < 4096)
            count = 4096;   /* (a toy vocabulary's block is 128 kB, not more: samples past it are skipped) */
        if (count > FB_ID_MAX)
            count = FB_ID_MAX;   /* (well within one 30-bit digit) */
        zero = PyLong_FromLong(0);
        tmpl = PyLong_FromLong(1000);
        if (zero == NULL || tmpl == NULL) {
            Py_XDECREF(zero);
            Py_XDECREF(tmpl);
            return -1;
        }
        size = (size_t)Py_TYPE(tmpl)->tp_basicsize + (size_t)Py_TYPE(tmpl)->tp_itemsize;
        if (size > FB_ID_STRIDE || Py_TYPE(tmpl)->tp_itemsize != 4 || Py_SIZE(tmpl) != 1) {
            /* (3.12+ keeps the size elsewhere: the sample check below decides there) */
    #if PY_VERSION_HEX < 0x030C0000
            ok = 0;
    #else
            ok = size <= FB_ID_STRIDE && Py_TYPE(tmpl)->tp_itemsize == 4;
    #endif
        }
        base = ok ? (char*)PyMem_RawCalloc((size_t)count, FB_ID_STRIDE) : NULL;   /* padding zero */
        if (ok && base == NULL) {
            Py_DECREF(zero);
            Py_DECREF(tmpl);
            PyErr_NoMemory();
            return -1;
        }
    #if PY_VERSION_HEX >= 0x030C0000
        rc = ((PyObject*)Py_None)->ob_refcnt;   /* the immortal value of this version */
    #else
        rc = sizeof(Py_ssize_t) >= 8 ? (Py_ssize_t)((unsigned long long)1 << 60) : PY_SSIZE_T_MAX / 2;
    #endif
        if (ok) {
            memcpy(base, zero, size);
            for (i = 1; i < count; i++) {
                uint32_t digit = (uint32_t)i;
                memcpy(base + i * FB_ID_STRIDE, tmpl, size);
                memcpy(base + i * FB_ID_STRIDE + Py_TYPE(tmpl)->tp_basicsize, &digit, 4);
            }
            for (k = 0; ok && k < (Py_ssize_t)(sizeof(samples) / sizeof(samples[0])); k++) {
                if (samples[k] >= count)
                    continue;
                real = PyLong_FromLong(samples[k]);
                if (real == NULL) {
                    PyMem_RawFree(base);
                    Py_DECREF(zero);
                    Py_DECREF(tmpl);
                    return -1;
                }
                ok = fb_id_same(base + samples[k] * FB_ID_STRIDE, real, size);
                Py_DECREF(real);
            }
            if (fb_id_count == 0 && getenv("FASTBPE_ID_INTS") && getenv("FASTBPE_ID_INTS")[0] == '0')
                ok = 0;   /* (for tests: as if the check failed, the tables keep tuples) */
            for (i = 0; ok && i < count; i++)
                ((PyObject*)(base + i * FB_ID_STRIDE))->ob_refcnt = rc;
        }
        Py_DECREF(zero);
        Py_DECREF(tmpl);
        if (!ok) {
            PyMem_RawFree(base);
            fb_id_off = 1;
            return 0;
        }
        fb_id_base = base;      /* (the block before stays: its ints may be in lists) */
        fb_id_count = count;
    #else
        (void)n;
    #endif
        return 0;
    }
    """
    char* fb_id_base
    Py_ssize_t fb_id_count
    int fb_id_off
    int FB_ID_STRIDE
    Py_ssize_t FB_ID_MAX
    int fb_id_ints_reserve(Py_ssize_t n) except -1


cdef tuple id_ints(Py_ssize_t n_ids, Py_ssize_t n_tokens):
    """What a table of n_tokens tokens with ids below n_ids keeps for idbuf_to_list: () when
    the immortal block holds its ints (made or grown here), else a tuple of the ints,
    untracked by the garbage collector (a tracked one of 200k items would be walked by the
    first collection after loading, in the caller's time).  Either holds at most about twice
    the tokens' ints: a sparse far id (an added token at 10^8) is made per call, not kept as
    gigabytes of ints (the block outlives every table)."""
    cdef Py_ssize_t n = min(n_ids, 2 * n_tokens + 65536, FB_ID_MAX)
    fb_id_ints_reserve(n)
    if not fb_id_off and n <= fb_id_count:
        return ()
    cdef tuple t = tuple(range(n))
    PyObject_GC_UnTrack(t)
    return t


def use_id_ints(bint on):
    """For tests: build lists from the immortal block (on, the default where this build and
    CPython allow it) or from each table's tuple / fresh ints (off).  Returns whether it was on.
    (FASTBPE_ID_INTS=0 in the environment: the first check of the block fails, as on a build
    it does not fit, and every table keeps a tuple.)"""
    global fb_id_off
    was = not fb_id_off
    if on and fb_id_count == 0:
        return was   # never made (not allowed here)
    fb_id_off = not on
    return was


def id_ints_made():
    """How many ints the immortal block holds (0: not used in this process)."""
    return fb_id_count


cdef object _np():
    """numpy, imported on first use: encoding to lists never needs it."""
    import numpy
    return numpy


cdef enum:
    ADDRESS_BLOCK = 256   # ids checked, then turned into addresses, a block at a time


cdef Py_ssize_t immortal_addresses(const tok_t* ids, Py_ssize_t n, PyObject** dst, char* base,
                                   uint32_t known) noexcept nogil:
    """dst[i] = the immortal int of ids[i] for the blocks of ids before the first block that
    has an id of known or more; returns how many were written.  Each loop has no branch in
    its body, so the compiler makes both vector loops (~10 instructions an id before, one
    compare and a branch per id)."""
    cdef Py_ssize_t i = 0, k, end
    cdef uint32_t past
    while i < n:
        end = min(n, i + ADDRESS_BLOCK)
        past = 0
        for k in range(i, end):
            past |= <uint32_t>(ids[k] >= known)
        if past:
            break
        for k in range(i, end):
            dst[k] = <PyObject*>(base + <size_t>ids[k] * FB_ID_STRIDE)
        i = end
    return i


cdef object idbuf_to_list(IdBuf* b, tuple id_objects):
    """A list of Python ints: the immortal block's (see id_ints), else id_objects[i] for the
    int i; an id past them (an added token's past the table's) is made."""
    return ids_to_list(b.data, b.len, id_objects)


cdef object ids_to_list(const tok_t* ids, Py_ssize_t n, tuple id_objects):
    """idbuf_to_list of n ids at `ids`."""
    cdef list out = PyList_New(0)
    fill_ids_list(out, ids, n, id_objects)
    return out


cdef list batch_lists(const tok_t* ids, const Py_ssize_t* starts, Py_ssize_t n, tuple id_objects):
    """n lists of ints, the i-th of the ids from starts[i] to starts[i + 1] (a batch's texts
    in one buffer).  Every list is made before any is filled, so a pass of the cycle collector
    that these allocations start walks the batch's lists while they are empty (and moves them
    on to an older generation, as any pass does) instead of every id of the lists filled
    before it (~30 instructions an id: 3-4% of a batch of 2 kB documents)."""
    cdef list out = empty_lists(n)
    cdef Py_ssize_t i
    for i in range(n):
        fill_ids_list(<list>PyList_GET_ITEM(out, i), ids + starts[i], starts[i + 1] - starts[i], id_objects)
    return out


cdef list idbufs_lists(IdBuf* bufs, Py_ssize_t n, tuple id_objects):
    """batch_lists of n texts' IdBufs: a list of ints each, all made before any is filled."""
    cdef list out = empty_lists(n)
    cdef Py_ssize_t i
    for i in range(n):
        fill_ids_list(<list>PyList_GET_ITEM(out, i), bufs[i].data, bufs[i].len, id_objects)
    return out


cdef list empty_lists(Py_ssize_t n):
    cdef list out = PyList_New(n)
    cdef Py_ssize_t i
    cdef object one
    for i in range(n):
        one = PyList_New(0)
        Py_INCREF(one)
        PyList_SET_ITEM(out, i, one)
    return out


cdef int fill_ids_list(list out, const tok_t* ids, Py_ssize_t n, tuple id_objects) except -1:
    """Make the empty list `out` hold the ints of the n ids at `ids` (one text's share of a
    batch's buffer).  The item array is written directly: an address computed per id (a new
    reference per id from the tuple)."""
    cdef Py_ssize_t i, known
    cdef PyObject** src = PySequence_Fast_ITEMS(id_objects)
    cdef PyObject** dst
    cdef char* base = fb_id_base
    cdef bint immortal = not fb_id_off and fb_id_count > 0
    if n == 0:
        return 0
    # the item array from PyMem_Malloc, not PyList_New's zeroed one: every slot is written
    # below before anything can look at the list (a memset of 8 bytes an id, 4% of an encode)
    dst = <PyObject**>PyMem_Malloc(n * sizeof(PyObject*))
    if dst == NULL:
        raise MemoryError()
    (<PyListObject*>out).ob_item = dst
    (<PyListObject*>out).allocated = n
    cdef PyObject* v
    known = fb_id_count if immortal else len(id_objects)
    i = 0
    if immortal:   # blocks whose ids are all in the block of ints, in two loops without branches
        i = immortal_addresses(ids, n, <PyObject**>dst, base, <uint32_t>min(known, <Py_ssize_t>0xFFFFFFFF))
    while i < n:
        if immortal:   # immortal ints: an address per id, no reference counted
            while i < n and <Py_ssize_t>ids[i] < known:
                dst[i] = <PyObject*>(base + <Py_ssize_t>ids[i] * FB_ID_STRIDE)
                i += 1
        else:
            while i < n and <Py_ssize_t>ids[i] < known:
                v = src[ids[i]]
                Py_INCREF(<object>v)
                dst[i] = v
                i += 1
        if i < n:   # an id past them
            v = PyLong_FromUnsignedLong(ids[i])
            if v == NULL:
                Py_SET_SIZE(out, i)     # the list owns the first i only
                raise MemoryError()
            dst[i] = v
            i += 1
    Py_SET_SIZE(out, n)
    return 0


cdef object idbuf_to_numpy(IdBuf* b):
    np = _np()
    arr = np.empty(b.len, dtype=np.uint32)
    cdef uint32_t[::1] view = arr
    if b.len:
        memcpy(&view[0], b.data, b.len * sizeof(tok_t))
    return arr


cdef carray.array _uint32_template = array("I")   # what clone copies the type code of


cdef object idbuf_to_array(IdBuf* b):
    """An array.array('I') of the ids: what a caller that may never need numpy gets (the
    piece ends of a short Encoding); numpy reads it without a copy.  Made in C (clone, one
    copy of the ids) where 'I' is 4 bytes (every CPython platform), not through a bytes
    object and frombytes (two copies and two Python calls a text of a batch)."""
    cdef carray.array arr
    if _uint32_template.ob_descr.itemsize != sizeof(tok_t):
        arr = array("I")
        if b.len:
            arr.frombytes((<char*>b.data)[:b.len * sizeof(tok_t)])
        return arr
    arr = carray.clone(_uint32_template, b.len, False)
    if b.len:
        memcpy(arr.data.as_voidptr, b.data, b.len * sizeof(tok_t))
    return arr
