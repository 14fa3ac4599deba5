"""Every setting the code reads is documented, every documented setting exists, and the README
stays a short front door that links only to files that exist.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest

from streams.config.settings import ENV_PREFIX, Settings
from tests.unit.deployment.repo import REPO, Problems, Repo, code_files, variables_the_code_reads

MAX_README_LINES = 300
MAX_LINE_CHARS = 300
# A commit hash as the README's history used to cite them: 7 to 40 hex digits, a digit and a
# letter among them (so no English word and no plain number matches).
COMMIT_HASH = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
MEMSTREAM_VARIABLE = re.compile(r"\bMEMSTREAM_[A-Z0-9_]*[A-Z0-9]\b")


def configuration_table(repo: Repo) -> dict[str, str]:
    """Variable -> its row, for each variable named in the first column of the README's
    configuration table (a row may name several, `A` / `B`)."""
    text = (repo.root / "README.md").read_text()
    section = text[text.index("## Configuration") :]
    end = section.find("\n## ")
    section = section if end < 0 else section[:end]
    rows = {}
    for line in section.splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 2:
            for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[1]):
                rows[name] = line
    return rows


def documentation(repo: Repo) -> str:
    pages = [repo.root / "README.md", *sorted((repo.root / "docs").glob("*.md"))]
    return "\n".join(page.read_text() for page in pages)


def check_every_setting_is_documented(repo: Repo) -> Problems:
    """Each settings field has a README configuration row; each variable the code reads
    anywhere is documented in the README or docs/."""
    table, docs = configuration_table(repo), documentation(repo)
    fields = {ENV_PREFIX + f.name.upper() for f in dataclasses.fields(Settings)}
    problems = [
        f"{n} has no row in README's configuration table" for n in sorted(fields - set(table))
    ]
    undocumented = {n for n in variables_the_code_reads() - fields if n not in docs}
    return problems + [f"{name} is documented nowhere" for name in sorted(undocumented)]


def check_every_documented_setting_exists(repo: Repo) -> Problems:
    """A documented variable the code does not read sends an operator after a knob that does
    nothing: each one in the configuration table, and each MEMSTREAM_* anywhere in the docs."""
    code = "\n".join(path.read_text() for path in code_files())
    problems = []
    for name in sorted(configuration_table(repo)):
        known = name in variables_the_code_reads() or re.search(rf"[\"']{name}[\"']", code)
        if not known:
            problems.append(f"the configuration table documents {name}, which the code never reads")
    mentioned = set(MEMSTREAM_VARIABLE.findall(documentation(repo)))
    problems += [
        f"the docs name {n}, which the code never reads"
        for n in sorted(mentioned - variables_the_code_reads())
    ]
    return problems


def check_readme_is_a_short_front_door(repo: Repo) -> Problems:
    """At most 300 lines, each (a configuration row included) at most 300 characters, and no
    commit hashes: history belongs to git, not to the front page."""
    lines = (repo.root / "README.md").read_text().splitlines()
    problems = [] if len(lines) <= MAX_README_LINES else [f"README has {len(lines)} lines"]
    problems += [
        f"README line {n} has {len(line)} characters"
        for n, line in enumerate(lines, 1)
        if len(line) > MAX_LINE_CHARS
    ]
    problems += [f"README cites commit {h}" for h in COMMIT_HASH.findall("\n".join(lines))]
    return problems


def check_links_point_at_files_that_exist(repo: Repo) -> Problems:
    problems = []
    for page in [repo.root / "README.md", *sorted((repo.root / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if (
                not target.startswith(("http://", "https://"))
                and not (page.parent / target).exists()
            ):
                problems.append(f"{page.name} links to {target}, which does not exist")
    return problems


CHECKS: list[Callable[[Repo], Problems]] = [
    check_every_setting_is_documented,
    check_every_documented_setting_exists,
    check_readme_is_a_short_front_door,
    check_links_point_at_files_that_exist,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
def test_the_repository_passes(check: Callable[[Repo], Problems]) -> None:
    assert check(REPO) == []


def test_the_configuration_table_is_found() -> None:
    """An empty table would make "every documented setting exists" pass vacuously."""
    assert {"MEMSTREAM_KAFKA_BOOTSTRAP", "MEMSTREAM_HTTP_READERS"} <= set(configuration_table(REPO))


def test_a_commit_hash_is_recognised_and_words_and_numbers_are_not() -> None:
    assert COMMIT_HASH.findall("fixed in 1bf9e9d, see 5779d24a; decade 1234567 facade") == [
        "1bf9e9d",
        "5779d24a",
    ]
