"""The one-line checks of the engine's public arguments (ValueError naming the argument)."""

from __future__ import annotations

import datetime as dt
import math
import numbers


def check_text(value: object, name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name}: expected a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name}: must not be empty or whitespace")
    if len(value) > limit:
        raise ValueError(f"{name}: {len(value)} characters is over max_text_chars={limit}")
    return value


def check_user(user_id: object) -> str:
    if not isinstance(user_id, str) or not user_id.strip():
        raise ValueError(f"user_id: expected a non-empty string, got {user_id!r}")
    return user_id


def check_importance(value: object, name: str = "importance") -> float:
    # A plain float or int skips the numbers.Real check (an ABC isinstance, the slowest
    # line of an add); bool and every other type still go through it.
    if value.__class__ is not float and value.__class__ is not int and (
        isinstance(value, bool) or not isinstance(value, numbers.Real)
    ):
        raise ValueError(f"{name}: expected a number in 0-10, got {value!r}")
    v = float(value)  # type: ignore[arg-type]
    if not math.isfinite(v) or not 0.0 <= v <= 10.0:
        raise ValueError(f"{name}: must be in 0-10, got {value!r}")
    return v


def check_time(value: object, name: str) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, dt.datetime):
        raise ValueError(f"{name}: expected a datetime or None, got {type(value).__name__}")
    if value.tzinfo is not None:
        # The project's convention is naive UTC; convert aware datetimes rather than refuse them.
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def check_flag(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: expected True or False, got {value!r}")
    return value


def check_slot(slot: object) -> tuple[str, str] | None:
    if slot is None:
        return None
    if (
        not isinstance(slot, (tuple, list))
        or len(slot) != 2
        or not all(isinstance(s, str) and s for s in slot)
    ):
        raise ValueError(f"slot: expected a (subject, attribute) pair of strings, got {slot!r}")
    return (slot[0], slot[1])

