# The flags of _char_cuts.merge_cuts' character table (one byte per BMP character), read by
# _char_bpe.CharBPE.encode_cut.  A piece is cut between characters a and b (not both ASCII)
# when both have a token and a has CUT_AFTER or b has CUT_BEFORE, or before the meta
# character (CUT_META) after another character unless that one has CUT_JOINS_META.
cdef enum:
    CUT_TOKEN = 1     # the character has a token (or falls back to <0xNN> tokens no merge takes: no merge joins it)
    CUT_AFTER = 2     # ... and no merge's left token ends with it
    CUT_BEFORE = 4    # ... and no merge's right token starts with it
    CUT_META = 8      # the meta character, when no merge joins a character to one before it but CUT_JOINS_META ones
    CUT_JOINS_META = 16   # some merge's left token ends with this character, its right one starts with the meta one
