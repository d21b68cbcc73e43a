"""A tokenizer.json's pipeline lowered to one `plan.Plan` (DESIGN.md §8): each stage says what
kernel form it takes (pre_tokenizers' `lower`, `lower_steps`), and this module puts them
together, or names the stage that did not lower (the plan's engine is then "pipeline")."""
from __future__ import annotations

from ..plan import Level, NotLowered, Plan, pipeline
from ..pretokenize import chain_kind, scanner_kind
from . import pre_tokenizers

WHOLE_TEXT = Level(r"[\s\S]+")   # no split: the whole segment is one piece


def lower(model, program, normalizer_refusal: str | None, steps: list) -> Plan:
    """The plan of a file: its BPE model, its normalizer (normalizers.kernel_program lowers it
    to `program`, or `normalizer_refusal` says why not), its pre-tokenizer's steps: as one
    scanner chain before a byte-level model, as SentencePiece's text form before a char-level
    one (char_level.text_form)."""
    if getattr(model, "char_model", None) is not None:
        return _char_level_plan(model, program, normalizer_refusal, steps)
    if not model.byte_level:
        return pipeline(getattr(model, "char_model_refusal", None) or "the model is not byte-level BPE" if not model.byte_level_input
                        else model.affix_refusal or "the model's tokens are not bytes (single bytes missing with an unk token or byte fallback)")
    if model.uses_dropout():
        return pipeline("BPE dropout")
    if normalizer_refusal is not None:
        return pipeline(normalizer_refusal)
    try:
        levels, _ = pre_tokenizers.lower_steps(steps)
    except NotLowered as e:
        return _matcher_plan(steps, str(e))
    kind, why = chain_kind(levels or [WHOLE_TEXT])
    if kind < 0:
        return _matcher_plan(steps, why)
    return Plan("kernel", kind, _tiling_pattern(levels), None, tuple(levels))


def lower_with_prefix_space(model, program, normalizer_refusal: str | None, steps: list, added) -> tuple:
    """(plan, the normalizer program the kernel runs, whether ByteLevel's prefix space is in it):
    prefix_space's program and steps where the plan then runs on the kernel, else the file's."""
    with_prefix, lowered = prefix_space(program, steps, added)
    if lowered is not steps:
        plan = lower(model, with_prefix, normalizer_refusal, lowered)
        if plan.engine == "kernel":
            return plan, with_prefix, True
    return lower(model, program, normalizer_refusal, steps), program, False


def prefix_space(program, steps: list, added) -> tuple:
    """(program, steps) for the kernel when the first step is ByteLevel with add_prefix_space:
    its " " before each segment not starting with one (HF prepends it to each piece the added
    tokens leave, after the normalizer) is the normalizer program's last op, and the step
    lowers without it.  Not when a step before it cuts (the space would go before every piece)
    or an added token is matched in normalized text (HF finds those before the prefix goes in,
    the kernel after its program ran): then (program, steps) as given, and the pipeline runs."""
    if not (steps and isinstance(steps[0], pre_tokenizers.ByteLevel) and steps[0].add_prefix_space):
        return program, steps
    if any(t.normalized for t in added.by_id.values()):
        return program, steps
    from ..normalize import NormalizerProgram, Prepend
    first = steps[0]
    ops = (program.ops if program is not None else ()) + (Prepend(" ", unless_first=True),)
    return NormalizerProgram(ops), [pre_tokenizers.ByteLevel(False, first.use_regex, first.trim_offsets)] + steps[1:]


def char_level_path(plan: Plan, model):
    """The char-level kernel's runner (char_level.CharLevelPath) of a plan that has one, else
    None: char_level and _char_bpe are imported for those files only."""
    if plan.char_kinds is None:
        return None
    from .char_level import CharLevelPath
    return CharLevelPath(plan, model)


def _char_level_plan(model, program, normalizer_refusal: str | None, steps: list) -> Plan:
    """A char-level model's plan: the normalizer's ops and the pre-tokenizer lowered to the
    text form its kernel makes (CharBPE's kind flags), or the refusal."""
    if model.uses_dropout():
        return pipeline("BPE dropout")
    if normalizer_refusal is not None:
        return pipeline(normalizer_refusal)
    from . import char_level   # (char-level files only, with _char_bpe)
    try:
        first, later, before = char_level.text_form(program.ops if program is not None else (), steps,
                                                    model.char_model.meta_char)
    except NotLowered as e:
        return pipeline(str(e))
    return Plan("kernel", model="char-level", char_kinds=(first, later),
                char_program=_program_of(before) if before else None)


def _program_of(ops: tuple):
    from ..normalize import NormalizerProgram
    return NormalizerProgram(ops)


def _matcher_plan(steps: list, refusal: str) -> Plan:
    """One Split(Isolated) regex outside the compiled subset, before ByteLevel without its
    regex: Oniguruma cuts (in Python) and the kernel merges; else the pipeline."""
    if (len(steps) == 2 and isinstance(steps[0], pre_tokenizers.Split)
            and isinstance(steps[1], pre_tokenizers.ByteLevel)
            and steps[0].behavior == "Isolated" and not steps[0].invert
            and isinstance(steps[0].pattern_node, dict) and "Regex" in steps[0].pattern_node
            and not steps[1].use_regex and not steps[1].add_prefix_space):
        return Plan("kernel+matcher", -1, steps[0].pattern_node["Regex"], steps[0].pattern)
    return pipeline(refusal)


def _tiling_pattern(levels: list) -> str | None:
    """The split pattern of a one-level chain whose matches tile every text (then regex's
    findall cuts as the chain does: what a tiktoken-style Encoding of the file splits with)."""
    if len(levels) != 1 or levels[0].byte_level or levels[0].dialect != "oniguruma":
        return None
    level = levels[0]
    if level.builtin >= 0:    # (a chain of Splits on one built-in kind has no one pattern)
        return level.pattern if scanner_kind(level.pattern) == level.builtin else None
    prog = pre_tokenizers.oniguruma_program(level.pattern)
    return level.pattern if prog is not None and prog.total else None
