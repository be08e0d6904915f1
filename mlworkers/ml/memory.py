"""Peak resident memory (RSS) of this process over a block of work. Pure: no Django.

On Linux the kernel keeps the peak itself (VmHWM in /proc/self/status) and lets a process reset
it (writing 5 to /proc/self/clear_refs), so the figure is exact and covers only the block, even in
a worker that ran bigger jobs before. Elsewhere (macOS, a kernel that refuses the reset) a thread
samples the RSS with psutil every `interval` seconds: a short spike between two samples can be
missed, which `method` says.
"""

from __future__ import annotations

import threading
from pathlib import Path

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
RESET_PEAK = "5"  # clear_refs: reset the peak resident set size (Linux >= 4.0)


def _kernel_peak() -> int | None:
    """VmHWM in bytes, or None where there is no /proc."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_kernel_peak() -> bool:
    try:
        CLEAR_REFS.write_text(RESET_PEAK)
    except OSError:
        return False
    return True


def _current_rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


class PeakMemory:
    """`with PeakMemory() as peak: ...` then `peak.bytes`, `peak.megabytes` and `peak.method`
    ("kernel" or "sampled")."""

    def __init__(self, interval: float = 0.05):
        self.interval, self.bytes, self.method = interval, 0, ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> PeakMemory:
        if _kernel_peak() is not None and _reset_kernel_peak():
            self.method = "kernel"
        else:
            self.method = "sampled"
            self.bytes = _current_rss()
            self._thread = threading.Thread(target=self._sample, name="peak-memory", daemon=True)
            self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.bytes = max(self.bytes, _current_rss())

    def __exit__(self, *exc_info) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self.bytes = max(self.bytes, _current_rss())
        else:
            self.bytes = _kernel_peak() or 0

    @property
    def megabytes(self) -> float:
        return round(self.bytes / 2**20, 1)

    def as_result(self) -> dict[str, float | str]:
        """The job-result fields: `peak_rss_mb` and how it was measured."""
        return {"peak_rss_mb": self.megabytes, "peak_rss_method": self.method}
