"""OSWorld's metric functions over values and text files, with OSWorld's semantics
(``desktop_env/evaluators/metrics/general.py`` and ``table.py`` of OSWorld, Apache-2.0; the
parity is measured by ``tests/osworld/test_parity.py``).

Each takes what OSWorld's takes: the result state (a value, or the local path of a file the
getter copied out of the desktop, ``None`` when it was missing), the expected state, and the
task's ``options``; it returns the score (0.0 to 1.0). Files are read with a size bound
(:data:`MAX_FILE_BYTES`): they come from the desktop, which the agent controls.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from collections.abc import Mapping
from typing import Any

from hud_gym.evaluation.patterns import compile_task_pattern

__all__ = [
    "MAX_FILE_BYTES",
    "check_csv",
    "check_direct_json_object",
    "check_image_size",
    "check_include_exclude",
    "check_list",
    "compare_csv",
    "diff_text_file",
    "exact_match",
    "is_in_list",
    "literal_match",
    "read_text",
]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The most a metric reads of one file (the getters copy no more than this)."""


def read_text(path: str) -> str:
    """The text of ``path`` (UTF-8, bounded to :data:`MAX_FILE_BYTES`), as OSWorld's ``open()`` reads it."""
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES)
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def check_include_exclude(result: Any, rules: Mapping[str, Any]) -> float:
    """1 when ``result`` contains every text of ``rules["include"]`` and none of ``rules["exclude"]``."""
    if result is None:
        return 0.0
    include = rules.get("include", [])
    exclude = rules.get("exclude", [])
    return float(all(r in result for r in include) and all(r not in result for r in exclude))


def exact_match(result: Any, rules: Mapping[str, Any]) -> float:
    """1 when ``result == rules["expected"]``."""
    return float(result == rules["expected"])


def is_in_list(result: Any, rules: Mapping[str, Any]) -> float:
    """1 when ``rules["expected"] in result``."""
    return float(rules["expected"] in result)


def literal_match(result: Any, expected: Any, **options: Any) -> float:
    """``str(result) == str(expected)`` (``type="str"``), or element-wise for lists (``type="list"``);
    ``ignore_case`` compares lower case."""
    kind = options.get("type", "str")
    fold = options.get("ignore_case", False)
    if kind == "str":
        left, right = str(result), str(expected)
        return float(left.lower() == right.lower() if fold else left == right)
    if kind == "list":
        if not isinstance(result, (list, tuple)) or not isinstance(expected, (list, tuple)):
            return 0.0
        if len(result) != len(expected):
            return 0.0
        a = [str(s).lower() if fold else str(s) for s in result]
        b = [str(s).lower() if fold else str(s) for s in expected]
        return float(a == b)
    raise NotImplementedError(f"literal_match: type {kind!r} is not supported")


def diff_text_file(result: str | None, expect: str) -> float:
    """The similarity ratio of the two files' lines (``difflib.SequenceMatcher``)."""
    if result is None:
        return 0.0
    return difflib.SequenceMatcher(a=read_text(result).splitlines(), b=read_text(expect).splitlines()).ratio()


def compare_csv(result: str | None, expected: str, **options: Any) -> float:
    """1 when the two files have the same lines (``strict=False``: stripped; ``ignore_case``)."""
    if result is None:
        return 0.0
    left, right = read_text(result).splitlines(), read_text(expected).splitlines()
    if not options.get("strict", True):
        left, right = [s.strip() for s in left], [s.strip() for s in right]
    if options.get("ignore_case", False):
        left, right = [s.lower() for s in left], [s.lower() for s in right]
    return float(left == right)


def _match_record(pattern: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    return all(k in record and record[k] == v for k, v in pattern.items())


def check_csv(result: str | None, rules: Mapping[str, Any]) -> float:
    """1 when every ``rules["expect"]`` record matches some row of the CSV file and no row matches
    a ``rules["unexpect"]`` record (a record matches when all its keys have its values)."""
    if result is None:
        return 0.0
    expect = rules.get("expect", [])
    unexpect = rules.get("unexpect", [])
    found = [False] * len(expect)
    clean = True
    for row in csv.DictReader(io.StringIO(read_text(result))):
        for i, pattern in enumerate(expect):
            found[i] = found[i] or _match_record(pattern, row)
        clean = clean and not any(_match_record(p, row) for p in unexpect)
    return float(all(found) and clean)


def _contains_expected(expected: Mapping[str, Any], result: Mapping[str, Any]) -> float:
    for key, value in expected.items():
        if isinstance(value, list):
            got = result.get(key)
            if not (isinstance(got, list) and any(v in got for v in value)):
                return 0.0
        elif isinstance(value, str):
            if value not in result.get(key):  # type: ignore[operator]
                return 0.0
        else:
            return 0.0
    return 1.0


def check_direct_json_object(result: Any, rules: Mapping[str, Any]) -> float:
    """1 when ``result`` (a JSON object, or its text with ``'`` read as ``"``) has the expected
    values: equal per key, or (``expect_in_result``) containing them."""
    if isinstance(result, str):
        result = json.loads(result.strip().replace("'", '"'))
    if result is None:
        return 0.0
    try:
        expected = rules["expected"]
        if not rules.get("expect_in_result", False):
            return float(all(expected.get(k) == result.get(k) for k in expected))
        return _contains_expected(expected, result)
    except Exception:  # noqa: BLE001  (OSWorld scores any malformed result 0)
        return 0.0


def check_list(result: str | None, rules: Mapping[str, Any]) -> float:
    """1 when every ``rules["expect"]`` regex is found on some line of the file and no
    ``rules["unexpect"]`` regex on any (the task's regexes run time-bounded:
    :mod:`hud_gym.evaluation.patterns`; one that does not finish raises, scored 0)."""
    if result is None:
        return 0.0
    expect = [compile_task_pattern(p) for p in rules.get("expect", [])]
    unexpect = [compile_task_pattern(p) for p in rules.get("unexpect", [])]
    found = [False] * len(expect)
    clean = True
    for line in read_text(result).splitlines(keepends=True):
        for i, pattern in enumerate(expect):
            found[i] = found[i] or pattern.search(line) is not None
        clean = clean and all(p.search(line) is None for p in unexpect)
    return float(all(found) and clean)


def check_image_size(src_path: str | None, rule: Mapping[str, Any]) -> float:
    """1 when the image's height and width are ``rule``'s (each only when given)."""
    if src_path is None:
        return 0.0
    from PIL import Image

    with Image.open(src_path) as image:
        width, height = image.size
    height_ok = rule.get("height") is None or height == rule["height"]
    width_ok = rule.get("width") is None or width == rule["width"]
    return float(height_ok and width_ok)
