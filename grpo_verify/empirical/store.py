"""Files that survive interruption: atomic whole-file writes, and an fsync'ed append-only jsonl
whose torn last line (a kill mid-write) is detected and dropped on resume."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from grpo_verify.outputs import output_problem


class OutError(ValueError):
    """An --out that cannot receive the run (a file, below a file, read-only)."""


RUN_FILES = ("config.json", "results.jsonl", "run.json", "summary.json", "table.md", "table.tex", "train.jsonl")


def check_out_dir(out: Path) -> None:
    """Refuse an --out that cannot receive the run, before anything is loaded or written (nothing is
    created here)."""
    problem = output_problem(Path(out), "folder", RUN_FILES)
    if problem:
        raise OutError(f"--out {out}: {problem}; choose another output folder with --out")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a temporary file in the same directory, fsync, then rename over ``path``: a reader
    sees the old file or the new one, never a part."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.fchmod(fd, 0o666 & ~umask)  # the usual permissions, not mkstemp's private 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def append_jsonl(path: str | Path, obj) -> None:
    """Append one line and fsync before returning: a finished item is on disk."""
    line = json.dumps(obj, separators=(",", ":")) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def read_jsonl(path: str | Path, repair: bool = False) -> tuple[list[dict], int]:
    """Records of a jsonl written by :func:`append_jsonl`, and the number of bytes of a torn last
    line (0 if none). Only the LAST line may be torn (no newline, or not JSON); ``repair`` truncates
    the file to drop it. A bad line before the last is corruption and raises ValueError."""
    path = Path(path)
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    records, offset = [], 0
    lines = data.split(b"\n")
    for k, raw in enumerate(lines):
        last = k == len(lines) - 1
        if last:
            if raw == b"":
                break
            torn = len(raw)  # no terminating newline: a partial write
            if repair:
                with open(path, "r+b") as fh:
                    fh.truncate(offset)
                    os.fsync(fh.fileno())
            return records, torn
        try:
            records.append(json.loads(raw))
        except (json.JSONDecodeError, UnicodeDecodeError):  # not JSON, or not even UTF-8 (ValueErrors both)
            if k == len(lines) - 2 and lines[-1] == b"":
                # a newline-terminated but undecodable final line (e.g. a torn multi-byte write): drop it too
                if repair:
                    with open(path, "r+b") as fh:
                        fh.truncate(offset)
                        os.fsync(fh.fileno())
                return records, len(raw) + 1
            raise ValueError(f"{path}:{k + 1}: corrupt record before the end of the file") from None
        offset += len(raw) + 1
    return records, 0
