# The C base of hf.Encoding (_encoding_base.pyx): what _short_call sets from C.
cdef list ids_from(object held)


cdef class EncodingIds:
    cdef object held
    cpdef list own_ids(self)


cdef class EncodingFields(EncodingIds):
    cdef public object _type_ids, _tokens, _offsets, _attention_mask, _special_tokens_mask
    cdef public object _word_ids, _sequence_ids, _overflowing, _pending, _sequences, _text
