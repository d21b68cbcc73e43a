"""Split patterns: the regular expressions that cut text into pieces before BPE.

The strings are the exact ones the reference tokenizers use, because the C scanner
(`fastbpe._pretokenize`) recognises a known pattern by comparing its text.
"""

# GPT-2 / r50k_base / p50k_base, as tiktoken writes it (possessive form of GPT-2's pattern).
R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

# GPT-2's original pattern, as minbpe's GPT2_SPLIT_PATTERN writes it.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# cl100k_base, as tiktoken writes it.
CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""

# cl100k_base as an exported tokenizer.json writes it (fastbpe.formats.hf_json): HF's Oniguruma
# reads \p{N}{1,3}+ as (\p{N}{1,3})+, so the possessive repeat becomes an atomic group, which
# means the same to `regex`.  The scanner knows it as cl100k.
CL100K_HF_PATTERN = CL100K_PATTERN.replace(r"\p{N}{1,3}+", r"(?>\p{N}{1,3})")

# The GPT-4 pattern as minbpe's GPT4_SPLIT_PATTERN writes it (the default for training).
GPT4_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""

# o200k_base (and o200k_harmony), as tiktoken writes it.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Llama-3 (and Llama-3.1 based models), as their tokenizer.json writes it.
LLAMA3_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# Qwen2 / Qwen2.5, as their tokenizer.json writes it: Llama-3's pattern with single digits.
QWEN2_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# LLaDA's and Ling-3.0's split, as their tokenizer.json writes it: GPT-4's spelling with single
# digits.  It cuts as Qwen2's (docs/pretokenize.md), so the scanner knows it as qwen2.
LLADA_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""

# Qwen3.5, as its tokenizer.json writes it: Qwen2's pattern with combining marks (\p{M}) in the letter
# runs and out of the punctuation runs.
QWEN35_PATTERN = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# The regex of Hugging Face tokenizers' ByteLevel pre-tokenizer (`use_regex: true`, e.g.
# GPT-2's and RoBERTa's tokenizer.json), as tokenizers' byte_level.rs writes it.
HF_GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Mistral's tekken.json (NeMo, Pixtral, Large 2 and later), as its config.pattern writes it:
# o200k's without the contraction suffixes, with single digits.
TEKKEN_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*""",
        r"""\p{N}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# DeepSeek-V3's pre-tokenizer (also V3.1, V3.2, R1), as its tokenizer.json writes it: three Split
# (Isolated) steps, each cutting the pieces of the one before (digits in threes, then CJK runs,
# then the rest), before ByteLevel without its regex.  One built-in kind cuts the whole chain.
DEEPSEEK_V3_SPLITS = (
    r"""\p{N}{1,3}""",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    # the file writes \r and \n as the characters themselves, not as escapes
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+""".replace("\\r\\n", "\r\n"),
)

# CLIP's Split regex (openai/clip-vit-*), as its tokenizer.json writes it: a Split with behavior
# Removed and invert (the whitespace between matches goes), then ByteLevel with its regex.  The
# built-in kind "clip" cuts that pair as a whole.
CLIP_PATTERN = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""

# The known patterns by short name (the C scanner handles each; the CLI, tests and benchmarks
# use these names).
BY_NAME = {
    "r50k": R50K_PATTERN,
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "gpt4": GPT4_PATTERN,
    "o200k": O200K_PATTERN,
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
    "hf_gpt2": HF_GPT2_PATTERN,
    "tekken": TEKKEN_PATTERN,
    "qwen35": QWEN35_PATTERN,
}

# Special-token text shared by the OpenAI encodings.
ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"
