"""A tiny progress bar for training: drawn on an interactive terminal, silent otherwise."""
from __future__ import annotations

import sys
import time


def wants_progress(show_progress) -> bool:
    """``None`` means: only when stderr is a terminal."""
    if show_progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(show_progress)


class Progress:
    """``Progress("merges", total=n)``; ``update(done)`` with the absolute amount done;
    ``close()``.  A total of ``None`` shows a running count.  Redraws at most 10x/s."""

    def __init__(self, label: str, total=None, unit: str = "", scale: float = 1.0,
                 enabled: bool = True, stream=None):
        self.label = label
        self.total = total
        self.unit = unit
        self.scale = scale
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.last_draw = 0.0
        self.done = 0

    def update(self, done) -> None:
        self.done = done
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last_draw >= 0.1:
            self.last_draw = now
            self._draw(now)

    def _draw(self, now) -> None:
        elapsed = now - self.start
        shown = self.done / self.scale
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(frac * 30)
            text = (f"\r{self.label}: [{bar:<30}] {shown:,.0f}/{self.total / self.scale:,.0f}"
                    f"{self.unit} {elapsed:5.1f}s")
        else:
            text = f"\r{self.label}: {shown:,.0f}{self.unit} {elapsed:5.1f}s"
        self.stream.write(text)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self._draw(time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
