"""The timeline clock inside widemem, without editing widemem's source.

widemem 2.0.2 reads time in one way only: ``datetime.now(timezone.utc)``, with the
name ``datetime`` imported at the top of each module that stamps or ages a memory
(a new memory's ``created_at``, the search's ``now``, the history rows). `WidememClock`
replaces that module-level name, in exactly those modules, by a ``datetime`` subclass
whose ``now()`` returns the clock's current time; everything else about ``datetime``
(parsing, arithmetic, isinstance) is unchanged. ``set(t)`` moves the clock; the
driver sets it to a fact's ``at`` before ``add`` and to a question's ``asked_at``
before ``search``, so widemem ages memories on the timeline clock, as the engine's
``age_from="clock"`` does.
"""

from __future__ import annotations

import datetime as dt
import importlib
from typing import Any

# Every widemem module that calls datetime.now (grep of widemem-ai 2.0.2).
PATCHED_MODULES = (
    "widemem.core.types",
    "widemem.core.memory",
    "widemem.retrieval.temporal",
    "widemem.retrieval.temporal_parser",
    "widemem.storage.history",
    "widemem.extraction.collector",
)


def _as_utc(t: dt.datetime) -> dt.datetime:
    return t.replace(tzinfo=dt.UTC) if t.tzinfo is None else t.astimezone(dt.UTC)


class WidememClock:
    """Context manager: widemem's ``datetime.now`` reads this clock while it is active."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        self.now = _as_utc(start) if start is not None else dt.datetime.now(dt.UTC)
        self._saved: list[tuple[Any, Any]] = []
        clock = self

        class ClockDatetime(dt.datetime):
            @classmethod
            def now(cls, tz: dt.tzinfo | None = None) -> Any:  # type: ignore[override]
                t = clock.now
                return t.astimezone(tz) if tz is not None else t.replace(tzinfo=None)

        self.datetime_class = ClockDatetime

    def set(self, t: dt.datetime | None) -> None:
        """Move the clock to ``t`` (naive = UTC); None leaves it where it is."""
        if t is not None:
            self.now = _as_utc(t)

    def __enter__(self) -> WidememClock:
        for name in PATCHED_MODULES:
            module = importlib.import_module(name)
            if getattr(module, "datetime", None) is not dt.datetime:
                self.__exit__()
                raise ValueError(f"widemem clock: {name}.datetime is not datetime.datetime; "
                                 "this widemem version reads time differently")
            self._saved.append((module, module.datetime))
            module.datetime = self.datetime_class  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        while self._saved:
            module, original = self._saved.pop()
            module.datetime = original
