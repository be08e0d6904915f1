"""Run code in threads released at the same instant: the shape of every race test here."""

import threading
from collections.abc import Callable

from django.db import connections


def run_together(count: int, work: Callable[[int], object]) -> list:
    """Run work(0..count-1) in threads released at the same instant; return results or exceptions."""
    barrier = threading.Barrier(count)
    results: list = [None] * count

    def body(index: int) -> None:
        try:
            barrier.wait()
            results[index] = work(index)
        except Exception as error:
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results
