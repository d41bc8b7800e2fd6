"""One writer per store file: an exclusive lock on ``<store>.lock`` beside it.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from pathlib import Path

from widemem_bench.engine.memory import utcnow

try:  # POSIX; elsewhere the single-writer rule is not enforced (documented)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


class StoreLockedError(ValueError):
    """Another engine (this process or another) holds the store's writer lock."""


class WriterLock:
    """An exclusive ``flock`` on ``<store>.lock``: one writer per store file.

    The kernel drops the lock when its holder dies, so a killed process never leaves a
    stale lock. flock locks belong to an open file description: a second engine in the
    same process is refused just like another process.
    """

    def __init__(self, store: Path) -> None:
        # The lock sits beside the file the path resolves to: a symlink (or another
        # spelling of the path) to an open store must meet the same lock.
        real = Path(os.path.realpath(store))
        self.path = real.with_name(real.name + ".lock")
        self._fd: int | None = None
        self.created = False  # this open made the lock file (a refused open removes it)
        # A forked child inherits the fd (and so the lock); it must neither write nor
        # unlock the parent's store (see MemoryStore.apply).
        self.pid = os.getpid()
        if fcntl is None:  # pragma: no cover
            return
        for _ in range(10):  # retried only while a refused open removes the file under us
            fd, self.created = self._open_file(store)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _holder(fd)
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise ValueError(f"store_path: cannot lock {self.path} ({exc.strerror})") from None
                raise StoreLockedError(
                    f"store_path: {store} is open in another engine ({holder}); "
                    "one writer per store: close that engine first"
                ) from None
            # Locked, but is it still the file at self.path? A refused open unlinks its
            # lock file while holding it; a lock on the unlinked file guards nothing.
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        else:  # pragma: no cover - ten opens each refused and removed in between
            raise StoreLockedError(f"store_path: {store}: its lock file {self.path} keeps being replaced")
        os.ftruncate(fd, 0)
        stamp = utcnow().isoformat(timespec="seconds")
        os.pwrite(fd, f"pid {os.getpid()} on host {socket.gethostname()} since {stamp}Z\n".encode(), 0)
        self._fd = fd

    def _open_file(self, store: Path) -> tuple[int, bool]:
        """The lock file's fd, and whether this call created the file."""
        while True:
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644), True
            except FileExistsError:
                pass
            except OSError as exc:
                problem = folder_problem(store.parent, exc)
                raise ValueError(f"store_path: {problem} (lock file {self.path})") from None
            try:
                return os.open(self.path, os.O_RDWR), False
            except FileNotFoundError:
                continue  # removed in between: create it
            except OSError as exc:
                if exc.errno == errno.EROFS:
                    raise ValueError(f"store_path: {folder_problem(store.parent, exc)}") from None
                raise ValueError(f"store_path: cannot open lock file {self.path} ({exc.strerror})") from None

    def __del__(self) -> None:  # an engine dropped without close() frees its store
        self.release()

    def discard(self) -> None:
        """Release after a refused open, removing the lock file if this open created it.
        Unlinked while still held, so no other open can be holding it; an open that
        already has it open re-checks the path after locking (see ``__init__``)."""
        if self._fd is not None and self.created and self.pid == os.getpid():
            self.path.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        fd = getattr(self, "_fd", None)  # None too when __init__ failed half-way
        self._fd = None
        if fd is not None and getattr(self, "pid", None) != os.getpid():
            os.close(fd)  # a forked child's copy: unlocking would free the parent's lock
            return
        if fd is not None and fcntl is not None:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _holder(fd: int, tries: int = 40) -> str:
    """The holder's line (pid, host, since). It locks first and writes that line just after,
    so a refused opener can read an empty file in between: wait for the line (up to ~0.2 s)."""
    for _ in range(tries):
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        if text:
            return text
        time.sleep(0.005)
    return "another process"


def folder_problem(folder: Path, exc: OSError) -> str:
    """One phrase saying why ``folder`` cannot take the store's files."""
    if exc.errno == errno.EROFS:
        return f"folder {folder} is on a read-only file system"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"no permission to write in folder {folder}"
    if exc.errno == errno.ENOENT:
        return f"folder {folder} does not exist"
    return f"cannot write in folder {folder} ({exc.strerror})"
