"""UBPE: BPE over any alphabet with multi-pair training steps and top-n tf-idf encodings.

A fast implementation of PyPI `ubpe-native` 0.3.0 (same models, encodings and JSON files):
`UBPE` encodes through the DAG of all segmentations, `UBPEClassic` by pair substitution.
"""
from .classic import UBPEClassic
from .model import UBPE
from .split import SplitMode

__all__ = ["UBPE", "UBPEClassic", "SplitMode"]
