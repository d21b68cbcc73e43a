"""Mistral's vocabulary files: `Tekkenizer` (tekken.json) with mistral-common's interface."""
from .tekken import SpecialTokenPolicy, Tekkenizer

__all__ = ["SpecialTokenPolicy", "Tekkenizer"]
