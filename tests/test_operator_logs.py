"""The operator's log filter (kccgen.runtime.logs): a failure is one line, a
repeat within the window is held back and counted, kopf's retried requests are
not errors, and the traceback is kept only at debug."""

from __future__ import annotations

import logging

from kccgen.runtime.logs import QuietFilter


def _record(name: str, level: int, msg: str, exc: BaseException | None = None) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, None, (type(exc), exc, None) if exc else None)


def test_an_exception_is_one_line_and_repeats_are_counted() -> None:
    now = [0.0]
    f = QuietFilter(window_s=30, clock=lambda: now[0])
    r = _record("kccgen.operator", logging.WARNING, "ns/a: reconcile failed", ValueError("boom\nsecond line"))
    assert f.filter(r) and r.exc_info is None and r.getMessage() == "ns/a: reconcile failed: ValueError: boom"
    for _ in range(5):
        now[0] += 1
        assert not f.filter(_record("kccgen.operator", logging.WARNING, "ns/a: reconcile failed", ValueError("boom")))
    now[0] += 30
    again = _record("kccgen.operator", logging.WARNING, "ns/a: reconcile failed", ValueError("boom"))
    assert f.filter(again) and "(and 5 more like it in 30s)" in again.getMessage()
    assert f.filter(_record("kccgen.operator", logging.WARNING, "ns/b: reconcile failed"))  # another object: its own line


def test_debug_keeps_the_traceback() -> None:
    r = _record("kccgen.operator", logging.WARNING, "x", ValueError("boom"))
    assert QuietFilter(debug=True).filter(r) and r.exc_info is not None


def test_kopf_retries_and_daemon_cancellations_are_dropped_but_not_its_final_error() -> None:
    f = QuietFilter()
    r = _record("kopf._cogs.clients.watching", logging.ERROR, "Request attempt #1/9 failed; will retry: GET /apis/x -> 429")
    assert not f.filter(r)
    assert QuietFilter(debug=True).filter(r)
    assert not f.filter(_record("kopf.objects", logging.WARNING, "Daemon 'Operator._daemon' is cancelled. Will escalate."))
    final = _record("kopf._cogs.clients.api", logging.ERROR, "Request attempt #9/9 failed; escalating: GET /apis/x")
    assert f.filter(final) and final.levelno == logging.ERROR
