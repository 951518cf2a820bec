"""Load queue and directory files (CSV or JSON) into pydantic models, all or nothing.

Every problem names the file, the row and the field; a file with any problem imports nothing.
Rows are counted from 1 without the header; for CSV the file line is given too.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

MAX_FILE_BYTES = 25_000_000  # a queue of 100,000 exceptions is ~16 MB
MAX_PROBLEMS_LISTED = 50
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Problem:
    row: int | None
    field: str | None
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}" + (f" (line {self.line})" if self.line else ""))
        if self.field:
            where.append(f"field '{self.field}'")
        return (", ".join(where) + ": " if where else "") + self.message


class QueueFileError(ValueError):
    def __init__(self, path: Path | str, problems: list[Problem]):
        self.path = Path(path)
        self.problems = problems
        shown = "\n".join(f"  {self.path.name}, {p}" for p in problems[:MAX_PROBLEMS_LISTED])
        more = len(problems) - MAX_PROBLEMS_LISTED
        suffix = f"\n  ... and {more} more" if more > 0 else ""
        super().__init__(f"{self.path}: nothing imported, {len(problems)} problem(s):\n{shown}{suffix}")


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise QueueFileError(path, [Problem(None, None, f"not UTF-8: byte {exc.start} on line {line}")]) from None


def _csv_rows(path: Path, text: str, model: type[BaseModel]) -> list[tuple[int | None, dict]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    expected = list(model.model_fields)
    required = [name for name, f in model.model_fields.items() if f.is_required()]
    problems = [Problem(None, c, "required column is missing") for c in required if c not in header]
    problems += [
        Problem(None, c, f"unexpected column (expected: {', '.join(expected)})") for c in header if c not in expected
    ]
    if len(set(header)) != len(header):
        problems.append(Problem(None, None, "a column name appears twice in the header"))
    if problems:
        raise QueueFileError(path, problems)
    rows = []
    for row in reader:
        if None in row:  # more cells than header columns
            raise QueueFileError(path, [Problem(len(rows) + 1, None, "more cells than columns", reader.line_num)])
        if any(v is None for v in row.values()):
            raise QueueFileError(path, [Problem(len(rows) + 1, None, "fewer cells than columns", reader.line_num)])
        # Empty optional cells mean "not given"; required ones stay "" and fail with their field named.
        cells = {k: v for k, v in row.items() if v != "" or k in required}
        rows.append((reader.line_num, cells))
    return rows


def _json_rows(path: Path, text: str) -> list[tuple[int | None, dict]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QueueFileError(path, [Problem(None, None, f"invalid JSON at line {exc.lineno}: {exc.msg}")]) from None
    if not isinstance(data, list):
        raise QueueFileError(path, [Problem(None, None, "expected a JSON array of objects")])
    problems = [Problem(i, None, "expected an object") for i, item in enumerate(data, 1) if not isinstance(item, dict)]
    if problems:
        raise QueueFileError(path, problems)
    return [(None, item) for item in data]


def parse_rows(path: Path | str, data: bytes, model: type[M], id_field: str | None = "id") -> list[M]:
    """Validate file content already read (for uploads as well as files on disk)."""
    path = Path(path)
    if len(data) > MAX_FILE_BYTES:
        raise QueueFileError(
            path, [Problem(None, None, f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}")]
        )
    text = _decode(path, data)
    if not text.strip():
        raise QueueFileError(path, [Problem(None, None, "file is empty")])
    suffix = path.suffix.lower()
    if suffix == ".csv":
        raw = _csv_rows(path, text, model)
    elif suffix == ".json":
        raw = _json_rows(path, text)
    else:
        raise QueueFileError(path, [Problem(None, None, f"unsupported file type {suffix!r}: use .csv or .json")])
    if not raw:
        raise QueueFileError(path, [Problem(None, None, "file has a header but no rows")])

    items: list[M] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for number, (line, cells) in enumerate(raw, 1):
        try:
            item = model.model_validate(cells)
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(str(part) for part in err["loc"]) or None
                problems.append(Problem(number, field, err["msg"], line))
            continue
        if id_field:
            key = str(getattr(item, id_field))
            if key in seen:
                problems.append(Problem(number, id_field, f"duplicate value {key!r} (first on row {seen[key]})", line))
                continue
            seen[key] = number
        items.append(item)
    if problems:
        raise QueueFileError(path, problems)
    return items


def load_rows(path: Path | str, model: type[M], id_field: str | None = "id") -> list[M]:
    """The file's rows as models. The pages read their queue on every run: bytes equal to a recent read's are not
    validated again (30,000 rows: ~0.7 s), and their models are shared (the queue's models are frozen)."""
    return list(shared_rows(path, model, id_field))


def shared_rows(path: Path | str, model: type[M], id_field: str | None = "id") -> tuple[M, ...]:
    """`load_rows`, as the one tuple every read gets while the file's bytes stay the same: what a page derives from
    it can be kept while it is the same object (app/kept_while_same.py)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise QueueFileError(path, [Problem(None, None, f"cannot read file: {exc.strerror}")]) from None
    return _parsed(path, data, model, id_field)


@lru_cache(maxsize=8)
def _parsed(path: Path, data: bytes, model: type[M], id_field: str | None) -> tuple[M, ...]:
    return tuple(parse_rows(path, data, model, id_field))
