"""Per-module mutation-testing summary from mutmut's results (run from the repository root, after ``mutmut run``).

    python experiments/mutation/summarise.py                       # print the table
    python experiments/mutation/summarise.py --out experiments/mutation/summary.json --markdown

Reads mutmut's result files ``mutants/<path>.py.meta`` (the exit code of every mutant; mutmut's own
status names, from ``mutmut.stats``) and the hand-checked list of equivalent mutants in
``experiments/mutation/annotations.json``. For each mutated module it counts the mutants by status and
computes the kill rate as detected / (total - equivalent), where detected = killed + timeout +
segfault (a mutant that makes the tests hang or crash is caught, as in ``mutmut export-cicd-stats``). Every surviving
mutant is listed with its diff lines and, if it is in the equivalent list, the reason; a survivor
listed under "open" (not equivalent, not killed: e.g. only observable on an accelerator) is shown
with its reason and counts against the kill rate; any other survivor is reported as unexplained. An equivalence entry whose recorded diff no longer
matches the mutant of that id (the function changed and mutmut renumbered) is reported as stale
and not counted.

``--markdown`` also prints the README tables (``--readme FILE`` writes them into FILE between
``<!-- summary:start -->`` and ``<!-- summary:end -->``): the per-module numbers, the equivalent mutants, and
the mutants a new test killed (the ``killed_by`` entries of annotations.json, each checked to be
killed in this run).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code

HERE = Path(__file__).resolve().parent
# a mutant whose test process crashes (mutmut's "segfault": the gram engine re-recording modules during
# the backward recurses until the process dies) is caught like one that makes the tests hang
DETECTED = ("killed", "timeout", "segfault")
STATUSES = ("killed", "timeout", "survived", "no tests", "suspicious", "segfault", "skipped",
            "caught by type check", "check was interrupted by user", "not checked")


def changed_lines(mutant: str, path: str) -> list[str]:
    """The '-' and '+' lines of mutmut's diff for one mutant, stripped of the diff header."""
    diff = get_diff_for_mutant(mutant, path=path)
    return [line.rstrip() for line in diff.splitlines()
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def natural_key(mutant: str) -> tuple[str, int]:
    """Sort x_f__mutmut_2 before x_f__mutmut_10."""
    name, _, number = mutant.rpartition("_")
    return name, int(number) if number.isdigit() else 0


def load_results(mutants_dir: Path) -> dict[str, dict]:
    """{source path: {"mutants": {id: status}, "duration_s": float}} for every mutated file."""
    results = {}
    for meta in sorted(mutants_dir.rglob("*.py.meta")):
        source = meta.relative_to(mutants_dir).as_posix()[: -len(".meta")]
        data = json.loads(meta.read_text())
        if not any(code is not None for code in data["exit_code_by_key"].values()):
            continue  # not run (a run restricted to other modules)
        results[source] = {
            "mutants": {key: status_by_exit_code[code] for key, code in data["exit_code_by_key"].items()},
            "duration_s": sum(data.get("durations_by_key", {}).values()),
        }
    return results


def summarise(results: dict[str, dict], annotations: dict) -> dict:
    equivalent = annotations.get("equivalent", {})
    open_ = annotations.get("open", {})  # survivors that are not equivalent and not killed, with the reason
    modules = {}
    problems = []
    for source, result in results.items():
        counts = {status: 0 for status in STATUSES}
        for status in result["mutants"].values():
            counts[status] += 1
        survivors = []
        equivalent_count = 0
        if counts["not checked"]:
            problems.append(f"{source}: {counts['not checked']} mutants not run yet")
        for mutant, status in sorted(result["mutants"].items(), key=lambda item: natural_key(item[0])):
            if status in DETECTED or status == "not checked":
                if mutant in equivalent:
                    problems.append(f"{mutant}: listed as equivalent but {status}")
                continue
            lines = changed_lines(mutant, source)
            entry = {"mutant": mutant, "status": status, "diff": lines}
            note = equivalent.get(mutant)
            if note is None and mutant in open_ and open_[mutant]["diff"] in lines:
                entry["verdict"] = "NOT KILLED"
                entry["reason"] = open_[mutant]["reason"]
            elif note is None:
                entry["verdict"] = "UNEXPLAINED"
                problems.append(f"{mutant}: {status}, not in the equivalent or open list")
            elif note["diff"] not in lines:
                entry["verdict"] = "STALE EQUIVALENCE ENTRY"
                problems.append(f"{mutant}: equivalence entry records {note['diff']!r}, mutant now {lines}")
            else:
                entry["verdict"] = "equivalent"
                entry["reason"] = note["reason"]
                equivalent_count += 1
            survivors.append(entry)
        total = len(result["mutants"])
        detected = sum(counts[s] for s in DETECTED)
        non_equivalent = total - equivalent_count
        modules[source] = {
            "total": total,
            **{status.replace(" ", "_"): count for status, count in counts.items() if count},
            "equivalent": equivalent_count,
            "kill_rate": round(detected / non_equivalent, 4) if non_equivalent else None,
            "mutant_test_time_s": round(result["duration_s"], 1),
            "survivors": survivors,
        }
    killed_by = []
    statuses = {mutant: status for result in results.values() for mutant, status in result["mutants"].items()}
    for mutant, note in annotations.get("killed_by", {}).items():
        current = note.get("now", mutant)  # the same mutation's id in the current code, if renumbered
        status = statuses.get(current, "not in this run")
        if note.get("note"):
            status = "code changed since (see note)"
        elif status not in ("not in this run", "not checked"):
            source = next(src for src, result in results.items() if current in result["mutants"])
            added = [line[1:].strip() for line in changed_lines(current, source) if line.startswith("+")]
            if note["diff"] not in added:
                status = "renumbered (its function changed since)"
            elif status not in DETECTED:
                problems.append(f"{mutant}: recorded as killed by {note['test']} but {status}")
        killed_by.append({"mutant": mutant, **note, "status_now": status})
    return {"modules": modules, "killed_by_added_tests": killed_by, "problems": problems}


def cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return text.replace("|", "\\|")


def markdown(summary: dict) -> str:
    out = ["| module | mutants | killed | timeout | crashed | survived | equivalent | kill rate = (killed + timeout + crashed) / (total - equivalent) | mutant test time |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for source, m in summary["modules"].items():
        rate = "n/a" if m["kill_rate"] is None else f"{100 * m['kill_rate']:.1f} %"
        if m.get("not_checked"):
            rate += f" (incomplete: {m['not_checked']} not run)"
        out.append(f"| `{source}` | {m['total']} | {m.get('killed', 0)} | {m.get('timeout', 0)} | "
                   f"{m.get('segfault', 0)} | {m.get('survived', 0)} | {m['equivalent']} | {rate} | "
                   f"{m['mutant_test_time_s']:.0f} s |")
    out += ["", "Surviving mutants (equivalent, or NOT KILLED with the reason):", "",
            "| module | mutant | diff (mutated line) | verdict: why |", "|---|---|---|---|"]
    for source, m in summary["modules"].items():
        for s in m["survivors"]:
            plus = [line[1:].strip() for line in s["diff"] if line.startswith("+")]
            text = "<br>".join(f"`{cell(line)}`" for line in plus)
            why = s.get("reason", "")
            out.append(f"| `{source}` | `{s['mutant'].rpartition('.')[2]}` | {text} | {s['verdict']}: {cell(why)} |")
    if summary["killed_by_added_tests"]:
        out += ["", "Mutants that survived the first run, and the tests added for them that kill them", "",
                "| module | mutant | diff (mutated line) | killed by (tests added) | commit | now |",
                "|---|---|---|---|---|---|"]
        for k in summary["killed_by_added_tests"]:
            tests = k["test"] if isinstance(k["test"], list) else [k["test"]]
            shown = "<br>".join(f"`{cell(t.rpartition('::')[2])}`" for t in tests[:3])
            if len(tests) > 3:
                shown += f"<br>(+{len(tests) - 3} more)"
            if k.get("note"):
                shown = k["note"]
            elif k.get("now"):
                shown += f"<br>(now `{k['now'].rpartition('.')[2]}`)"
            module, _, name = k["mutant"].rpartition(".")
            out.append(f"| `{module}` | `{name}` | `{cell(k['diff'])}` | {shown} | {k['commit']} | "
                       f"{k['status_now']} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=Path, default=HERE / "annotations.json")
    parser.add_argument("--marker", default="summary",
                        help="--readme writes between <!-- MARKER:start --> and <!-- MARKER:end -->")
    parser.add_argument("--out", type=Path, help="write the summary as JSON here")
    parser.add_argument("--only", action="append", default=[], metavar="PREFIX",
                        help="only source files starting with PREFIX (repeatable), e.g. grpo_verify/gram/")
    parser.add_argument("--exclude", action="append", default=[], metavar="PREFIX",
                        help="leave out source files starting with PREFIX (repeatable)")
    parser.add_argument("--markdown", action="store_true", help="print the README tables")
    parser.add_argument("--readme", type=Path,
                        help="write the tables into this file, between the lines <!-- summary:start --> and "
                             "<!-- summary:end -->")
    args = parser.parse_args(argv)

    annotations = json.loads(args.annotations.read_text()) if args.annotations.exists() else {}
    results = load_results(Path("mutants"))  # mutmut's working copy; its diff helpers read it relative to cwd
    results = {source: result for source, result in results.items()
               if (not args.only or source.startswith(tuple(args.only))) and not source.startswith(tuple(args.exclude))}
    if not results:
        print("no mutmut results under mutants/: run mutmut first, from the repository root", file=sys.stderr)
        return 1
    if args.only:  # the added-test kills of the selected modules only, not every module's
        annotations = {**annotations, "killed_by": {
            mutant: note for mutant, note in annotations.get("killed_by", {}).items()
            if "/".join(note.get("now", mutant).split(".")[:-1]) + ".py" in results}}
    summary = summarise(results, annotations)
    from importlib.metadata import version
    summary = {"tool": f"mutmut {version('mutmut')}", "date": datetime.date.today().isoformat(), **summary}
    if args.out:
        args.out.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    for source, m in summary["modules"].items():
        rate = "n/a" if m["kill_rate"] is None else f"{100 * m['kill_rate']:.1f} %"
        if m.get("not_checked"):
            rate += f" (incomplete: {m['not_checked']} not run)"
        print(f"{source}: {m['total']} mutants, {m.get('killed', 0)} killed, {m.get('timeout', 0)} timeout, "
              f"{m.get('segfault', 0)} crashed, {m.get('survived', 0)} survived ({m['equivalent']} equivalent), "
              f"kill rate {rate}")
    if args.markdown:
        print()
        print(markdown(summary))
    if args.readme:
        text = args.readme.read_text()
        start, end = f"<!-- {args.marker}:start -->\n", f"<!-- {args.marker}:end -->"
        head, _, rest = text.partition(start)
        _, _, tail = rest.partition(end)
        args.readme.write_text(f"{head}{start}{markdown(summary)}\n{end}{tail}")
    for problem in summary["problems"]:
        print("PROBLEM:", problem, file=sys.stderr)
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
