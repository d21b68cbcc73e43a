"""`patch_transformers()`: transformers' fast tokenizers run on fastbpe.

After `fastbpe.patch_transformers()`, `AutoTokenizer.from_pretrained(folder)` returns the class
transformers always returns (Qwen2TokenizerFast, LlamaTokenizerFast, ...), fully set up by
transformers, with its backend (`tok.backend_tokenizer`, `tok._tokenizer`) swapped for a
`fastbpe.hf.Tokenizer` built from the backend's own tokenizer.json text.  Everything else
(chat templates, padding and truncation options, BatchEncoding) stays transformers'.

The hook is `from_pretrained` of the fast tokenizer base class (transformers 5:
TokenizersBackend; 4.x: PreTrainedTokenizerFast): it runs after transformers has finished
configuring the backend (added tokens, post-processor, truncation, padding), so the swap sees
exactly what the stock tokenizer would use.  A tokenizer fastbpe cannot serve (not BPE, a
pipeline node fastbpe does not implement) keeps HF's backend; that is logged once per reason.
`train_new_from_iterator` trains with fastbpe's kernels while patched (`_route_training`).
"""
from __future__ import annotations

import functools
import logging
import sys
import threading

from ._nodes import UnsupportedError
from .tokenizer import Tokenizer

logger = logging.getLogger("fastbpe.transformers")

# (class, attribute name, original classmethod) of every hook in place
_hooks: list = []
_logged: set = set()


def _fast_base_classes() -> list:
    """The classes whose from_pretrained builds a tokenizers-backed tokenizer."""
    found = []
    try:  # transformers 5
        from transformers.tokenization_utils_tokenizers import TokenizersBackend
        found.append(TokenizersBackend)
    except ImportError:
        pass
    if not found:
        try:  # transformers 4.x
            from transformers.tokenization_utils_fast import PreTrainedTokenizerFast
            found.append(PreTrainedTokenizerFast)
        except ImportError:
            pass
    return found


def swap_backend(tokenizer):
    """Give a transformers tokenizer a fastbpe backend built from its current one; keep the
    HF backend (and log why, once) when fastbpe cannot serve it.  Returns the tokenizer."""
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is None or isinstance(backend, Tokenizer):
        return tokenizer
    try:
        fast = Tokenizer.from_str(backend.to_str())
    except (UnsupportedError, ValueError) as e:
        reason = str(e)
        if reason not in _logged:
            _logged.add(reason)
            logger.warning("fastbpe.patch_transformers: %s stays on HF tokenizers: %s",
                           type(tokenizer).__name__, reason)
        return tokenizer
    fast.encode_special_tokens = backend.encode_special_tokens
    tokenizer._tokenizer = fast
    return tokenizer


def _route_plain_text_encoding(cls) -> None:
    """transformers 5 encodes text without added tokens (`split_special_tokens`, the control
    tokens that `apply_chat_template(..., sanitize_control_tokens=True)` marks in user text)
    by calling the backend's normalizer, pre-tokenizer and model one by one, through HF's
    stage API; a fastbpe backend answers it in one call instead.  Installed once and kept
    after unpatch_transformers: tokenizers loaded while patched keep their fastbpe backend
    and still need it; an HF backend goes to transformers' own method."""
    original = cls.__dict__.get("_encode_without_added_tokens")
    if original is None or getattr(original, "fastbpe_route", False):
        return

    def _encode_without_added_tokens(self, text, _original=original):
        backend = getattr(self, "_tokenizer", None)
        if isinstance(backend, Tokenizer):
            return backend.encode_ids_without_added_tokens(text)
        return _original(self, text)

    functools.update_wrapper(_encode_without_added_tokens, original)
    _encode_without_added_tokens.fastbpe_route = True   # marks our wrapper: installed once
    cls._encode_without_added_tokens = _encode_without_added_tokens


class _TrainingBackend:
    """What transformers' `train_new_from_iterator` builds its new backend with while patched
    (its module's `TokenizerFast`, i.e. `tokenizers.Tokenizer`): a fastbpe Tokenizer, whose
    `train_from_iterator` trains with fastbpe's kernels and reads HF's trainer for its settings;
    HF's own Tokenizer for what fastbpe cannot serve (not BPE, an unknown stage)."""

    def __init__(self, hf_class):
        self.hf_class = hf_class

    def from_str(self, json_text: str):
        try:
            return Tokenizer.from_str(json_text)
        except (UnsupportedError, ValueError) as e:
            reason = str(e)
            if reason not in _logged:
                _logged.add(reason)
                logger.warning("fastbpe.patch_transformers: train_new_from_iterator stays on HF tokenizers: %s",
                               reason)
            return self.hf_class.from_str(json_text)

    def __getattr__(self, name):     # from_file, from_buffer, ...: HF's, as before
        return getattr(self.hf_class, name)


class _UntrainedView:
    """A fastbpe backend seen by `train_new_from_iterator`: its `to_str()` has an empty model
    (transformers empties the vocabulary and merges first; writing out and parsing 150k tokens
    in Python took most of a small training's time), everything else is the backend's."""

    def __init__(self, backend):
        self.backend = backend

    def to_str(self, pretty: bool = False) -> str:
        return self.backend.untrained_str()

    def __getattr__(self, name):
        return getattr(self.backend, name)


_training_lock = threading.Lock()


def _route_training(cls) -> None:
    """While patched, `tok.train_new_from_iterator(...)` trains with fastbpe and returns a
    tokenizer served by fastbpe: transformers' own method runs (it rewrites the tokenizer.json,
    picks the trainer's settings, fixes the post-processor's ids, builds the new tokenizer),
    with its module's `TokenizerFast` pointed at fastbpe for the call.  One call at a time
    (the module attribute is shared); installed once, as `_route_plain_text_encoding`."""
    original = cls.__dict__.get("train_new_from_iterator")
    if original is None or getattr(original, "fastbpe_route", False):
        return
    module = sys.modules[original.__module__]

    def train_new_from_iterator(tok, text_iterator, vocab_size, *args, _original=original, **kwargs):
        if not is_patched() or not hasattr(module, "TokenizerFast"):
            return _original(tok, text_iterator, vocab_size, *args, **kwargs)
        backend = getattr(tok, "_tokenizer", None)
        with _training_lock:
            saved = module.TokenizerFast
            module.TokenizerFast = _TrainingBackend(saved)
            if isinstance(backend, Tokenizer):
                tok._tokenizer = _UntrainedView(backend)
            try:
                trained = _original(tok, text_iterator, vocab_size, *args, **kwargs)
            finally:
                module.TokenizerFast = saved
                if isinstance(backend, Tokenizer):
                    tok._tokenizer = backend
        return swap_backend(trained)

    functools.update_wrapper(train_new_from_iterator, original)
    train_new_from_iterator.fastbpe_route = True
    cls.train_new_from_iterator = train_new_from_iterator


def patch_transformers() -> None:
    """Make transformers' fast tokenizers (AutoTokenizer.from_pretrained and the model
    classes' own from_pretrained) use fastbpe from now on.  Calling it again does nothing."""
    if _hooks:
        return
    bases = _fast_base_classes()
    if not bases:
        raise ImportError("patch_transformers needs transformers (4.x or 5.x) installed")
    for cls in bases:
        _route_plain_text_encoding(cls)
        _route_training(cls)
        original = cls.__dict__.get("from_pretrained")
        inherited = cls.from_pretrained

        def from_pretrained(klass, *args, _inherited=inherited, **kwargs):
            return swap_backend(_inherited.__func__(klass, *args, **kwargs))

        functools.update_wrapper(from_pretrained, inherited.__func__)
        _hooks.append((cls, original))
        cls.from_pretrained = classmethod(from_pretrained)


def unpatch_transformers() -> None:
    """Undo patch_transformers: tokenizers loaded from now on use HF tokenizers again
    (those already loaded keep their backend)."""
    while _hooks:
        cls, original = _hooks.pop()
        if original is None:
            del cls.from_pretrained
        else:
            cls.from_pretrained = original


def is_patched() -> bool:
    return bool(_hooks)
