"""The shape of ``ranking/glossary.tsv``: five columns, one row per English word."""

import pytest

from tests.support import SERVICE_DIR

GLOSSARY = SERVICE_DIR / "tool_selector" / "ranking" / "glossary.tsv"
COLUMNS = 5
#: Least share of rows with all four languages filled.
MIN_FULL_SHARE = 0.9


def rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.split("\n")[:-1] if not line.startswith("#")]


def problems(text: str) -> list[str]:
    """Every way ``text`` breaks the glossary's shape, one message each."""
    found = [] if text.startswith("#") and text.endswith("\n") else ["no header or last newline"]
    found += [f"empty line {i}" for i, line in enumerate(text.split("\n")[:-1]) if not line]
    table = [r for r in rows(text) if r != [""]]
    found += [f"{r[0]!r}: {len(r)} columns" for r in table if len(r) != COLUMNS]
    english = [r[0] for r in table]
    found += [f"{w!r} twice" for w in sorted({w for w in english if english.count(w) > 1})]
    found += [f"{w!r} not lower ASCII" for w in english if not (w.isascii() and w.isalpha())]
    found += [f"{w!r} not lower ASCII" for w in english if w != w.lower()]
    for r in table:
        forms = [f for cell in r[1:] if cell for f in cell.split("|")]
        found += [f"{r[0]!r}: form {f!r}" for f in forms if not f or f != f.strip()]
    full = sum(len(r) == COLUMNS and all(r[1:]) for r in table)
    if full < MIN_FULL_SHARE * len(table):
        found.append(f"only {full} of {len(table)} rows have all four languages")
    return found


def test_the_shipped_glossary_has_its_shape() -> None:
    assert problems(GLOSSARY.read_text(encoding="utf-8")) == []


def test_the_shipped_glossary_has_its_rows() -> None:
    assert len(rows(GLOSSARY.read_text(encoding="utf-8"))) >= 600


HEADER = "# english\tzh\tja\tes\tde\n"
GOOD = "file\t文件\tファイル\tarchivo|archivos\tdatei|dateien\n"


def test_a_well_formed_sample_passes() -> None:
    assert problems(HEADER + GOOD) == []


@pytest.mark.parametrize(
    "text",
    [
        GOOD,
        HEADER + GOOD + "\n",
        HEADER + "file\t文件\tファイル\tarchivo\n",
        HEADER + GOOD + GOOD,
        HEADER + GOOD.replace("file", "File"),
        HEADER + GOOD.replace("file", "fichier_x"),
        HEADER + GOOD.replace("archivo|", "archivo||"),
        HEADER + GOOD.replace("archivo|", "|"),
        HEADER + GOOD.replace("archivo", "archivo "),
        HEADER + GOOD + "delete\t删除\t\t\t\n",
        HEADER + GOOD.rstrip("\n"),
    ],
    ids=["no-header", "empty-line", "four-columns", "duplicate", "upper-case", "not-a-word",
         "empty-form", "bar-alone", "padded-form", "half-empty", "no-last-newline"],
)  # fmt: skip
def test_a_malformed_sample_fails(text: str) -> None:
    assert problems(text) != []
