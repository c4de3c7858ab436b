"""Where a command will write, checked before its work: an output that cannot be written is
found in a second, not after minutes of ranking (and not after a first output is written).

Each check raises the ``OSError`` that writing would raise, naming the path (``cli.main``
prints it as one line, status 2): a directory where a file goes (or a file where a folder
goes), a folder that is missing (where the command does not make it) or is not a folder,
no permission. What cannot be known before (a full disk) still fails when it happens.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path


def check_files(paths: Iterable[Path], *, folders_made: bool = False) -> None:
    """Each of ``paths`` can be written as a file; ``folders_made``: the command makes the
    missing folders above it (``mkdir(parents=True)``), else they must exist."""
    for path in paths:
        if path.is_dir():
            raise _error(errno.EISDIR, path)
        if path.exists():
            if not os.access(path, os.W_OK):
                raise _error(errno.EACCES, path)
            continue
        _check_above(path, folders_made=folders_made)


def check_folder(folder: Path) -> None:
    """Files can be written into ``folder``, made with the folders above it if missing."""
    if folder.exists():
        if not folder.is_dir():
            raise _error(errno.ENOTDIR, folder)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise _error(errno.EACCES, folder)
        return
    _check_above(folder, folders_made=True)


def _check_above(path: Path, *, folders_made: bool) -> None:
    """The nearest existing folder above ``path`` is a folder this process can write in."""
    above = path.absolute().parent
    if not folders_made and not above.exists():
        raise _error(errno.ENOENT, path)
    while not above.exists():
        above = above.parent
    if not above.is_dir():
        raise _error(errno.ENOTDIR, path)
    if not os.access(above, os.W_OK | os.X_OK):
        raise _error(errno.EACCES, path)


def _error(code: int, path: Path) -> OSError:
    """The ``OSError`` subclass of ``code`` (``IsADirectoryError``, ...) naming ``path``."""
    return OSError(code, os.strerror(code), str(path))
