"""The generated parts of ``docs/reproductions/``, from finished runs.

    for n in tfrc tfwc ttfwc taxonomy warc ptcp msfrs; do
        tfcc reproduce $n --out /tmp/repro-$n --update-doc docs/reproductions/$n.md
    done
    .venv/bin/python scripts/reproduction_counts.py /tmp/repro-*

replaces the counts table of ``docs/reproductions/README.md`` (the lines between
``<!-- counts:begin -->`` and ``<!-- counts:end -->``) by one row per reproduction: its
``--quick`` and full-set pass counts, how many of the full set's verdicts their seeds settle (of
the claims with a 95 % interval, :meth:`tfcc.reproduce.Outcome.settled`) and the run they come
from (each ``--out`` directory's ``run.json``). The ``--quick`` counts are those of the claims
the claim file marks ``quick = true`` (``--quick`` only selects claims and each runs as in the
full set, so a full run holds both counts).

    .venv/bin/python scripts/reproduction_counts.py \
        --page docs/reproductions/tfrc.md /tmp/repro-tfrc

instead fills one page's results block from a finished run, as ``--update-doc`` would have.

    for n in tfrc tfwc ttfwc taxonomy warc ptcp msfrs; do
        tfcc reproduce $n --runs /tmp/runs-$n --out /tmp/repro-$n
        tfcc reproduce $n --runs /tmp/runs-$n --out /tmp/seeds10-$n --seeds 1-10
    done
    .venv/bin/python scripts/reproduction_counts.py --seeds /tmp/repro-* /tmp/seeds10-*

replaces, instead of the counts table, the table between ``<!-- seeds:begin -->`` and
``<!-- seeds:end -->``: each reproduction's verdicts at ``--seeds`` beside those at its claim
file's seeds, and the claims whose verdict differs (:func:`tfcc.reproduce.seeds_table`); it
takes one full run of each reproduction at its claim file's seeds and one at ``--seeds`` (the
same seeds for all), told apart by their ``run.json``. (The same ``--runs`` directory makes the
second command run only the seeds the first did not.)

The file is left untouched, with a message and exit code 2, when its markers are missing or
duplicated, a run is a ``--quick`` one or older than its claim file, a reproduction has no
run, or a ``--seeds`` run is given for the counts table or a page.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tfcc import reproduce as rep

README = Path(__file__).resolve().parents[1] / "docs" / "reproductions" / "README.md"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path, help="the --out directory of each full run")
    ap.add_argument("--readme", type=Path, default=README, help=f"(default: {README})")
    ap.add_argument(
        "--page", type=Path, help="fill this page's results block from the one run given instead"
    )
    ap.add_argument(
        "--seeds",
        action="store_true",
        help="fill the --seeds table instead, from a run of each reproduction at its claim "
        "file's seeds and one at --seeds",
    )
    args = ap.parse_args(argv)
    try:
        if args.page is not None and args.seeds:
            raise rep.PageError("--page and --seeds: choose one")
        if args.page is not None:
            if len(args.runs) != 1:
                raise rep.PageError("--page takes exactly one run directory")
            info = rep.update_page_from(args.runs[0], args.page)
            print(f"{args.page}: results table replaced ({info.describe()})")
            outcomes = rep.outcomes_from_json(rep.read_run(args.runs[0])[1])
            for why in rep.status_mismatches(args.page.read_text(encoding="utf-8"), outcomes):
                print(f"check the page's Status lines: {why}")
            return 0
        markers, what = rep.COUNTS_MARKERS, "counts"
        if args.seeds:
            markers, what = rep.SEEDS_MARKERS, "--seeds"
        if (why := rep.check_page(args.readme, markers)) is not None:
            raise rep.PageError(why)
        table = rep.seeds_table(args.runs) if args.seeds else rep.counts_table(args.runs)
        rep.update_page(args.readme, table, markers)
    except (rep.PageError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(table, end="")
    print(f"{args.readme}: {what} table replaced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
