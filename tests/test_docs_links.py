"""Every relative link in the repository's Markdown resolves.

The reproduction pages link each failing claim to the section holding its evidence, and those
sections are renamed and moved as helpers add to them; a link that points nowhere hides the
evidence the Status list promises. Anchors follow GitHub's heading slugs: lower case, every
character but letters, digits, spaces, hyphens and underscores dropped, spaces turned into
hyphens, and a repeated heading numbered from `-1`. Links that leave the clone (the README's
`../shared/DESIGN.md`) are not checked: what lies beside a clone differs between machines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {"target", ".venv", "out", ".git", "node_modules"}
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"#{1,6} (.*)")


def markdown_files() -> list[Path]:
    # Hidden directories are tools' caches (.pytest_cache writes a README.md after a first run,
    # which made a fresh clone's first run collect one test fewer than every later one).
    return sorted(
        p
        for p in ROOT.rglob("*.md")
        if not SKIP_DIRS.intersection(parts := p.relative_to(ROOT).parts)
        and not any(part.startswith(".") for part in parts[:-1])
    )


def slug(heading: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.replace("`", ""))
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out: set[str] = set()
    in_code = False
    for line in text.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(1))
        count = seen.get(base)
        seen[base] = 0 if count is None else count + 1
        out.add(base if count is None else f"{base}-{count + 1}")
    return out


def broken_links(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    own = anchors(text)
    broken = []
    for match in LINK.finditer(text):
        target = match.group(1)
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        if file_part:
            linked = (path.parent / file_part).resolve()
            if not linked.is_relative_to(ROOT):
                continue  # outside the clone (the README's ../shared/DESIGN.md): not ours to check
            if not linked.exists():
                broken.append(f"{target}: no such file")
            elif anchor and linked.suffix == ".md":
                if anchor not in anchors(linked.read_text(encoding="utf-8")):
                    broken.append(f"{target}: no such heading in {file_part}")
        elif anchor not in own:
            broken.append(f"{target}: no such heading")
    return broken


def test_slugs_follow_github() -> None:
    assert slug("E2.4's loss counts in stock ns-2.35 (2026-11-26, e24ns2)") == (
        "e24s-loss-counts-in-stock-ns-235-2026-11-26-e24ns2"
    )
    assert slug("M2 and the `connection` model") == "m2-and-the-connection-model"
    assert anchors("# A\n## A\n```\n# A\n```\n") == {"a", "a-1"}


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert broken_links(path) == []
