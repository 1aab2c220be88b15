"""The gallery: every finished experiment under ``OUT`` on one page, with its checks.

:func:`write` reads the published record of each experiment (``OUT/NAME/config.json``,
written last by the runner, :mod:`tabular.experiments.harness.storage`) and writes two files from
those records alone:

- ``OUT/index.html``: a static page that needs no server and loads nothing from
  outside (its style and script are inline; the figures are the PNGs beside it).
  At the top a summary (experiments, checks passed, failed and not applicable, the
  total run time, the commits and dates of the runs), then one card per experiment:
  its figures (a click enlarges one), what it reproduces, a table of every
  comparison its checks made (the published or exact value, the measured one, the
  tolerance, the verdict), its settings with the ``--set`` overrides marked, its
  seed and run time, and links to its module's source and to its numbers.
- ``OUT/checks.md``: the same content as Markdown, for a terminal or a pull request.

Because both come from the records, running one experiment rewrites the gallery
with every other experiment's card as it was. Every text that reaches the page is
escaped: a record is data, never markup.
"""

from __future__ import annotations

import glob
import html
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from tabular.experiments.harness.checks import FAILED, NOT_APPLICABLE, PASSED, Verdict
from tabular.experiments.harness.registry import EXPERIMENTS, MODULES
from tabular.experiments.harness.storage import CONFIG, NUMBER_SUFFIXES, atomic_write, lock

INDEX, CHECKS = "index.html", "checks.md"
#: The folder of the package's modules (the repository's ``experiments/``).
SOURCE_DIR = Path(__file__).resolve().parent.parent


def records(out: Path, names) -> list[dict]:
    """The published record of each experiment in ``names`` that ``out`` holds a finished
    run of, in the order of ``names``, each followed by its sweep points' (the folders
    ``NAME@...``, by name); a missing or unreadable record: no card. Each record gets
    ``folder``, the folder it was read from."""
    found = []
    for name in names:
        sweep = sorted(Path(out).glob(f"{glob.escape(name)}@*"))
        for folder in [Path(out) / name, *sweep]:
            try:
                stored = json.loads((folder / CONFIG).read_text())
            except (OSError, ValueError):
                continue
            if isinstance(stored, dict) and stored.get("experiment") == name:
                found.append({**stored, "folder": folder.name})
    return found


def verdicts(record: dict) -> list[Verdict]:
    return [Verdict.from_record(r) for r in record.get("checks", [])]


def tally(found: list[dict]) -> Counter:
    """How many checks passed, failed and did not apply, over every record."""
    return Counter(v.status for record in found for v in verdicts(record))


def seconds(value: float) -> str:
    """A run time as ``"12.3 s"`` or ``"4 min 05 s"``."""
    if value < 60:
        return f"{value:.1f} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest:02d} s"


def shown(value) -> str:
    """A stored setting as ``--set`` takes it (``0.05,0.1`` for a list)."""
    if isinstance(value, list):
        return ",".join(map(shown, value)) if value else "()"
    if isinstance(value, bool):
        return str(value).lower()
    return "None" if value is None else str(value)


def seed(record: dict) -> str:
    value = record.get("seed")
    return "none (deterministic)" if value is None else shown(value)


def distinct(found: list[dict], key: str) -> list[str]:
    """The different values of ``key`` over the records, in first-seen order."""
    return list(dict.fromkeys(str(r[key]) for r in found if r.get(key)))


def summary_items(found: list[dict]) -> list[tuple[str, str]]:
    """The summary at the top of the page, as (label, text) pairs."""
    counts = tally(found)
    finished = distinct(found, "finished")
    dates = (f"{min(finished)} to {max(finished)}" if len(finished) > 1
             else (finished[0] if finished else "unknown"))
    modes = sorted({"quick" if r.get("quick") else "full" for r in found})
    return [
        ("experiments", f"{len(found)} ({' and '.join(modes) or 'none'})"),
        ("checks passed", str(counts[PASSED])),
        ("checks failed", str(counts[FAILED])),
        ("checks not applicable", str(counts[NOT_APPLICABLE])),
        ("total run time", seconds(sum(float(r.get("seconds", 0.0)) for r in found))),
        ("commit", ", ".join(distinct(found, "commit")) or "unknown"),
        ("runs finished (UTC)", dates),
        ("page written (UTC)", time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())),
    ]


def status_of(record: dict) -> str:
    """The experiment's verdict: failed if a check that applied failed."""
    statuses = {v.status for v in verdicts(record)}
    return FAILED if FAILED in statuses else PASSED


def figures(record: dict) -> list[str]:
    return [f for f in record.get("files", []) if f.endswith(".png")]


def number_files(record: dict) -> list[str]:
    files = [f for f in record.get("files", []) if f.endswith(NUMBER_SUFFIXES)]
    return files + [CONFIG]


def source_file(name: str) -> str:
    """Experiment ``name``'s module as a path under ``experiments/``."""
    return MODULES[EXPERIMENTS.index(name)].replace(".", "/") + ".py"


def source_link(name: str, out: Path) -> str:
    """The module's source, relative to the page (so the page moves with the tree)."""
    return os.path.relpath(SOURCE_DIR / source_file(name), Path(out).resolve())


def check_rows(verdict: Verdict) -> list[tuple[str, str, str, str, str]]:
    """``(quantity, expected, measured, tolerance, status)`` for each comparison of a
    check; one row saying why for a check that did not apply or gave words only."""
    if verdict.changed:
        return [("not run: " + "; ".join(verdict.changed), "", "", "", NOT_APPLICABLE)]
    rows = [(m.quantity, m.expected, m.measured, m.tolerance,
             PASSED if m.passed else f"{FAILED}: {m.said()}") for m in verdict.measures]
    said = {m.said() for m in verdict.measures if not m.passed}
    rows += [(failure, "", "", "", FAILED) for failure in verdict.failures  # words only
             if failure not in said]
    return rows or [("(no numbers recorded)", "", "", "", verdict.status)]


def settings_rows(record: dict) -> list[tuple[str, str, str]]:
    """``(setting, value, default if the run overrode it else "")``."""
    # a record written before "defaults" existed kept the defaults under "overrides"
    defaults = record.get("defaults", record.get("overrides", {}))
    return [(key, shown(value), shown(defaults[key]) if key in defaults else "")
            for key, value in record.get("config", {}).items()]


# ------------------------------------------------------------------ HTML
def esc(text) -> str:
    return html.escape(str(text), quote=True)


def href(path: str) -> str:
    """A relative link, percent-encoded, then escaped for an attribute."""
    return esc(quote(path.replace(os.sep, "/")))


STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 78rem;
       padding: 1rem 1.5rem; color: #222; background: #fafafa; }
h1 { margin: 0.2rem 0 0.6rem; }
.summary { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr));
           gap: 0.4rem 1rem; background: #fff; border: 1px solid #ddd; padding: 0.8rem;
           border-radius: 6px; }
.summary div span { display: block; color: #666; font-size: 0.8rem; }
.card { background: #fff; border: 1px solid #ddd; border-radius: 6px; margin: 1.2rem 0;
        padding: 0.6rem 1rem 1rem; }
.card h2 { margin: 0.3rem 0; font-size: 1.25rem; }
.badge { font-size: 0.8rem; padding: 0.1rem 0.5rem; border-radius: 1rem; margin-left: 0.5rem;
         vertical-align: middle; }
.passed { color: #1a6d2f; } .failed { color: #b3261e; font-weight: bold; }
.badge.passed { background: #e3f4e6; } .badge.failed { background: #fde7e5; }
.not-applicable { color: #7a5d00; }
.figures { display: flex; flex-wrap: wrap; gap: 0.6rem; margin: 0.6rem 0; }
.figures img { max-height: 16rem; max-width: 100%; border: 1px solid #eee; cursor: zoom-in; }
table { border-collapse: collapse; margin: 0.4rem 0; font-size: 0.88rem; }
th, td { border: 1px solid #ddd; padding: 0.2rem 0.45rem; text-align: left;
         vertical-align: top; }
th { background: #f1f1f1; }
td.check { font-family: ui-monospace, monospace; }
tr.override td { background: #fff4d6; }
.meta { color: #444; font-size: 0.9rem; }
code { font-size: 0.85rem; }
#lightbox { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.85); display: flex;
            align-items: center; justify-content: center; cursor: zoom-out; }
#lightbox[hidden] { display: none; }
#lightbox img { max-width: 96vw; max-height: 94vh; background: #fff; }
"""

SCRIPT = """
const box = document.getElementById("lightbox");
function shut() { box.hidden = true; box.replaceChildren(); }
for (const link of document.querySelectorAll("a.zoom")) {
  link.addEventListener("click", (event) => {
    event.preventDefault();
    const big = document.createElement("img");
    big.src = link.href;
    big.alt = link.querySelector("img").alt;
    box.replaceChildren(big);
    box.hidden = false;
  });
}
box.addEventListener("click", shut);
document.addEventListener("keydown", (event) => { if (event.key === "Escape") shut(); });
"""


def html_table(header, rows, row_class=None) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = row_class(i, row) if row_class else ""
        cells = "".join(f"<td>{esc(c)}</td>" for c in row)
        body.append(f'<tr class="{esc(cls)}">{cells}</tr>' if cls else f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def html_checks(record: dict) -> str:
    header = ("check", "compared", "published or exact", "measured", "tolerance", "result")
    body = []
    for verdict in verdicts(record):
        rows = check_rows(verdict)
        for i, (quantity, expected, measured, tolerance, status) in enumerate(rows):
            name = (f'<td class="check" rowspan="{len(rows)}" title="{esc(verdict.doc)}">'
                    f"{esc(verdict.name)}</td>") if i == 0 else ""
            cells = "".join(f"<td>{esc(c)}</td>" for c in (quantity, expected, measured,
                                                             tolerance))
            klass = status.split(":")[0].replace(" ", "-")
            body.append(f'<tr>{name}{cells}<td class="{klass}">{esc(status)}</td></tr>')
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    return (f'<table class="checks"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def html_card(record: dict, out: Path) -> str:
    name, folder = record["experiment"], record["folder"]
    status = status_of(record)
    figs = "".join(
        f'<a class="zoom" href="{href(f"{folder}/{png}")}">'
        f'<img src="{href(f"{folder}/{png}")}" alt="{esc(folder)}: {esc(png)}"></a>'
        for png in figures(record))
    docs = "".join(f"<li><code>{esc(v.name)}</code>: {esc(v.doc)}</li>" for v in verdicts(record))
    settings = html_table(
        ("setting", "value", "default"), settings_rows(record),
        lambda i, row: "override" if row[2] else "")
    links = ", ".join(f'<a href="{href(f"{folder}/{f}")}">{esc(f)}</a>'
                      for f in number_files(record))
    meta = (f"seed {esc(seed(record))} · run time "
            f"{esc(seconds(float(record.get('seconds', 0.0))))} · "
            f"{'--quick' if record.get('quick') else 'full run'} · "
            f"tabular {esc(record.get('version', '?'))} · commit "
            f"{esc(record.get('commit') or 'unknown')} · finished "
            f"{esc(record.get('finished') or 'unknown')}")
    not_drawn = (f'\n<p class="meta"><b>Figures not drawn:</b> {esc(record["plot_error"])} '
                 "(the numbers are kept; --replot draws them again)</p>"
                 if record.get("plot_error") else "")
    overridden = sorted(record.get("overrides", {}))
    marked = (f" Overridden with <code>--set</code>: {esc(', '.join(overridden))}."
              if overridden else "")
    return f"""<section class="card" id="{esc(folder)}">
<h2>{esc(folder)}<span class="badge {status}">{esc(status)}</span></h2>
<p>{esc(record.get("description", ""))}</p>
<p><b>Reproduces:</b> {esc(record.get("reproduces") or "unknown")}</p>
<div class="figures">{figs}</div>{not_drawn}
<h3>Checks</h3>
{html_checks(record)}
<details><summary>what each check expects</summary><ul>{docs}</ul></details>
<h3>Settings</h3>
<p class="meta">Highlighted rows differ from the defaults of this mode.{marked}</p>
{settings}
<p class="meta">{meta}</p>
<p class="meta">Source: <a href="{href(source_link(name, out))}">\
<code>experiments/{esc(source_file(name))}</code></a> · numbers: {links}</p>
</section>"""


def html_page(found: list[dict], out: Path) -> str:
    summary = "".join(f"<div><span>{esc(label)}</span>{esc(text)}</div>"
                      for label, text in summary_items(found))
    toc = " · ".join(f'<a href="#{esc(r["experiment"])}">{esc(r["experiment"])}</a>'
                     for r in found)
    cards = "\n".join(html_card(r, out) for r in found)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>tabular-zoo experiments</title>
<style>{STYLE}</style>
</head>
<body>
<h1>tabular-zoo experiments</h1>
<div class="summary">{summary}</div>
<p class="meta">{toc}</p>
{cards}
<div id="lightbox" hidden></div>
<script>{SCRIPT}</script>
</body>
</html>
"""


# ------------------------------------------------------------------ Markdown
def md(text) -> str:
    """Text for a Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def md_table(header, rows) -> list[str]:
    lines = ["| " + " | ".join(map(md, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md(c) if c != "" else " " for c in row) + " |" for row in rows]
    return lines


def markdown(found: list[dict], out: Path) -> str:
    lines = ["# tabular-zoo experiments", ""]
    lines += md_table(("", ""), summary_items(found)) + [""]
    for record in found:
        name, folder = record["experiment"], record["folder"]
        lines += [f"## {folder}: {status_of(record)}", "",
                  md(record.get("description", "")), "",
                  f"Reproduces: {md(record.get('reproduces') or 'unknown')}", ""]
        lines += [f"![{folder}: {png}]({quote(f'{folder}/{png}')})" for png in figures(record)]
        if record.get("plot_error"):
            lines += ["", f"Figures not drawn: {md(record['plot_error'])} (the numbers are kept)"]
        lines += [""]
        rows = [(v.name if i == 0 else "", *row) for v in verdicts(record)
                for i, row in enumerate(check_rows(v))]
        lines += md_table(("check", "compared", "published or exact", "measured",
                           "tolerance", "result"), rows) + [""]
        rows = [(key, f"**{value}** (--set)" if default else value, default)
                for key, value, default in settings_rows(record)]
        lines += md_table(("setting", "value", "default"), rows) + [""]
        lines += [f"Seed {seed(record)}, run time "
                  f"{seconds(float(record.get('seconds', 0.0)))}, "
                  f"{'--quick' if record.get('quick') else 'full run'}, commit "
                  f"{record.get('commit') or 'unknown'}. Source: "
                  f"[experiments/{source_file(name)}]({quote(source_link(name, out))}); "
                  "numbers: "
                  + ", ".join(f"[{f}]({quote(f'{folder}/{f}')})" for f in number_files(record)),
                  ""]
    return "\n".join(lines)


def write(out: Path, names) -> list[Path]:
    """Write ``out/index.html`` and ``out/checks.md`` from the records of ``names``
    that ``out`` holds; returns their paths. Two runs finishing together take turns
    (the lock of ``index.html``), so the gallery written last has read every record
    published before it."""
    out = Path(out)
    paths = []
    with lock(out / INDEX):
        found = records(out, names)
        for filename, text in ((INDEX, html_page(found, out)), (CHECKS, markdown(found, out))):
            atomic_write(out / filename, lambda f, text=text: f.write(text.encode()))
            paths.append(out / filename)
    return paths


def main(argv=None) -> int:
    """``python -m tabular.experiments.harness.gallery [OUT]``: rewrite the gallery of
    ``OUT`` (default ``results``) from its records, without running anything."""
    argv = sys.argv[1:] if argv is None else list(argv)
    out = Path(argv[0]) if argv else Path("results")
    if not out.is_dir():
        print(f"python -m tabular.experiments.harness.gallery: error: {out} is not a "
              "directory", file=sys.stderr)
        return 2
    for path in write(out, EXPERIMENTS):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
