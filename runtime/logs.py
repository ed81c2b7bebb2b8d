"""The operator's log: one line per failure, repeats held back, tracebacks at debug.

While the API server is down every reconcile's write fails, and kopf's watchers
fail with it: a traceback each made 768 in 20 s for 40 objects, burying the one
line that says what is wrong. This filter sits on the handler: a record with an
exception becomes its message plus the exception's first line (the traceback
stays for ``--log debug``), and a record whose text was already written in the
last ``window_s`` is counted instead, its count given with the next one written.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable


class QuietFilter(logging.Filter):
    """Collapse exceptions to one line and hold back identical lines."""

    def __init__(self, window_s: float = 30.0, debug: bool = False, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.window_s = window_s
        self.debug = debug
        self.clock = clock
        self._last: dict[tuple[str, int, str], tuple[float, int]] = {}  # (logger, level, text) -> (written at, held back since)
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("kopf.") and not self.debug:
            text = str(record.msg)
            if text.endswith("is cancelled. Will escalate."):  # a daemon stopped by kopf: routine
                return False
            if "failed; will retry" in text:
                # kopf retries a request the server refused for now (storage
                # re-initializing at start, an API-server outage): one line per
                # attempt per object; it logs an ERROR if the retries run out.
                return False
        if record.exc_info and not self.debug:
            exc = record.exc_info[1]
            if exc is not None:
                first = (str(exc).splitlines() or [""])[0][:300]
                record.msg = f"{record.getMessage()}: {type(exc).__name__}: {first}".rstrip(": ")
                record.args = None
            record.exc_info = None
            record.exc_text = None
        text = record.getMessage()
        key = (record.name, record.levelno, text)
        now = self.clock()
        with self._lock:
            if len(self._last) > 10_000:  # bounded: old lines are forgotten first
                for k in list(self._last)[:5_000]:
                    del self._last[k]
            seen = self._last.get(key)
            if seen is not None and now - seen[0] < self.window_s:
                self._last[key] = (seen[0], seen[1] + 1)
                return False
            held = seen[1] if seen is not None else 0
            self._last[key] = (now, 0)
        if held:
            record.msg = f"{text} (and {held} more like it in {self.window_s:.0f}s)"
            record.args = None
        return True


def configure(level: str) -> None:
    """The process's logging for ``kccctl operator``: one line per record, quiet."""
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    quiet = QuietFilter(debug=level.lower() == "debug")
    for h in logging.getLogger().handlers:
        h.addFilter(quiet)
    if level.lower() != "debug":
        # kopf logs every handler call at INFO: a thousand objects would flood the log.
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
        # The Kubernetes client's own retries: the failure that follows, if any,
        # is the object's one line.
        logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
