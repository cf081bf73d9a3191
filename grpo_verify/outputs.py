"""Writing outputs safely: checking an output location before any work, and atomic writes with the
usual permissions. Shared by every command that writes files (render, report, empirical, the
experiment scripts)."""

from __future__ import annotations

import argparse
import csv
import io
import os
import tempfile
from pathlib import Path
from typing import Callable, Sequence


def positive_int(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def write_atomically(path: Path, content: str | Callable[[Path], None]) -> None:
    """Write ``content`` (text, or ``content(tmp)`` writing a file at ``tmp``) via a temporary file in the
    same folder, then rename it over ``path``: an interrupted run leaves no half file. The file gets the
    usual permissions (0666 less the umask), not mkstemp's private 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o666 & ~umask)
            if not callable(content):
                f.write(content)
        if callable(content):
            content(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def csv_text(rows: Sequence[dict], columns: Sequence[str] | None = None, *, line_end: str = "\r\n",
             float_format: str | None = None) -> str:
    """The CSV text of dict rows, as ``csv.DictWriter`` writes it: a header of ``columns`` (the first row's
    keys unless given), then one line per row; floats through ``float_format`` (e.g. ``"{:.12g}"``) if given.
    Write it with :func:`write_atomically`."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns if columns is not None else rows[0]),
                            lineterminator=line_end)
    writer.writeheader()
    for row in rows:
        writer.writerow(row if float_format is None else
                        {k: (float_format.format(v) if isinstance(v, float) else v) for k, v in row.items()})
    return buffer.getvalue()


def save_figure(fig, stem: Path, *, dpi: int = 130, **savefig) -> list[Path]:
    """``stem``.png and ``stem``.pdf of a matplotlib figure, each written atomically; the PDF without a
    creation date, so that rerunning a script gives the same bytes. Returns the two paths (the figure
    stays open: the caller closes it)."""
    written = []
    for suffix in (".png", ".pdf"):
        path = Path(f"{stem}{suffix}")
        metadata = {"CreationDate": None} if suffix == ".pdf" else {}
        write_atomically(path, lambda tmp: fig.savefig(tmp, format=suffix[1:], dpi=dpi, metadata=metadata, **savefig))
        written.append(path)
    return written


def output_problem(path: Path, kind: str = "folder", files: tuple[str, ...] = ()) -> str:
    """Why ``path`` cannot receive the output ("" if it can), found without creating anything.

    ``kind`` is "folder" (the output folder, whose ``files`` will be written in it) or "file" (one output
    file, written atomically: a temporary file in its folder renamed over it). A missing path is fine
    if its nearest existing ancestor is a folder in which files can be created (tried with a
    temporary file, so read-only mounts and root's view of permissions are both right).
    """
    path = Path(path)
    if path.exists():
        if kind == "folder":
            if not path.is_dir():
                return "it exists and is not a folder"
            for name in files:
                if (path / name).is_dir():
                    return f"{path / name} is a folder, where the output file {name} should go"
            return _cannot_create_in(path)
        if path.is_dir():
            return "it is a folder, not a file"
        if not path.is_file():
            return "it exists and is not a regular file"
        return _cannot_create_in(path.parent)
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder, so it cannot be created"
    return _cannot_create_in(ancestor)


def _cannot_create_in(folder: Path) -> str:
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe."):
            pass
    except OSError as exc:
        return f"cannot create files in {folder} ({exc.strerror or exc})"
    return ""
