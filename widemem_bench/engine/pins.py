"""The sha256 pins of committed files: the resolvers' (review 8 C3), answerability's and calibration's.

``files/pins.json`` holds the sha256 of ``files/pair_model.json``, ``files/pair_cross.json`` and
``files/structure_frames.json``, written by the tools that write those files (``make
resolver-pair``, ``make resolver-cross``, ``make resolver-fit``) in the same step. The resolver reads either file
through :func:`read_pinned`, which refuses in one line a file whose bytes are not the
pinned ones (a threshold edited by hand changed every decision silently before), naming
the make target that rebuilds it. A file passed by path (a test's, a fit's own output)
is the caller's and is not pinned. Answerability v4's committed file is pinned the same way
in its own folder (``answerability/files/pins.json``, written by ``make fit-v4``): the
functions take the pins file, the make target and the owner's name.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

FILES = Path(__file__).parent / "files"
PINS = FILES / "pins.json"
# which make target writes each pinned file (and its pin)
TARGETS = {"pair_model.json": "make resolver-pair", "structure_frames.json": "make resolver-fit",
           "pair_cross.json": "make resolver-cross"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pins(table: Path | None = None) -> dict[str, str]:
    """The pinned sha256 per file name ({} when there is no pins file)."""
    table = table or PINS
    if not table.is_file():
        return {}
    try:
        got = json.loads(table.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in got.items()} if isinstance(got, dict) else {}


def read_pinned(path: Path, table: Path | None = None, target: str | None = None, who: str | None = None) -> str:
    """The text of the committed file ``path`` once its sha256 is the one pinned in ``table``
    (default: the resolvers'); else a one-line ValueError naming the make target that
    rebuilds the file and its pin."""
    table = table or PINS
    data = path.read_bytes()
    got, want = sha256(data), pins(table).get(path.name)
    if got != want:
        pinned = f"the {want[:12]} pinned in {table}" if want else f"pinned: {table} has no pin for it"
        who = who or ("resolver pair" if path.name == "pair_cross.json" else "resolver structure")
        raise ValueError(f"{who}: {path} has sha256 {got[:12]}, not {pinned} (edited "
                         f"by hand?); restore it (git checkout) or rebuild it and its pin with "
                         f"`{target or TARGETS.get(path.name, 'make resolver-pair')}`")
    return data.decode("utf-8")


def write_pin(path: Path, table: Path | None = None) -> None:
    """Pin the bytes of ``path`` as they are now in ``table`` (default: the resolvers')."""
    table = table or PINS
    pinned = pins(table)
    pinned[path.name] = sha256(path.read_bytes())
    table.write_text(json.dumps(dict(sorted(pinned.items())), indent=1) + "\n", "utf-8")


def write_pinned(path: Path, text: str) -> None:
    """Write the committed file ``path`` and its pin, together (commit both)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    write_pin(path)


def committed_table(path: Path, folder: Path) -> Path | None:
    """``folder``'s pins file when ``path`` is a file of that committed folder, else None."""
    return folder / "pins.json" if path.resolve().parent == folder.resolve() else None


def read_committed(path: Path, folder: Path, target: str, who: str) -> str:
    """The text of ``path``: checked against its pin when it is one of ``folder``'s committed files."""
    table = committed_table(path, folder)
    return read_pinned(path, table, target, who) if table is not None else path.read_text("utf-8")


def pin_committed(path: Path, folder: Path) -> None:
    """Pin ``path``'s bytes when it was written into the committed ``folder`` (commit both)."""
    table = committed_table(path, folder)
    if table is not None:
        write_pin(path, table)
