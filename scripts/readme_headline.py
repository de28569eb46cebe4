"""Copy the headline of the committed GPU report into README.md, so the README shows its figures.

Run after committing a new ``benchmarks/report/``: ``python scripts/readme_headline.py``. Replaces the
text between the ``headline:begin`` / ``headline:end`` markers of README.md with the report's device and
date lines, its headline tables, links to its plots, its targets table and its SyncBatchNorm tables.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "benchmarks" / "report" / "report.md"
README = ROOT / "README.md"
BEGIN, END = "<!-- headline:begin -->", "<!-- headline:end -->"


def headline(report: str) -> str:
    lines = report.splitlines()
    facts = [ln for ln in lines if ln.startswith(("- Date:", "- Device:", "- Devices:", "- Versions:", "- Peers:"))]
    copy = next((ln for ln in lines if ln.startswith("Copy bandwidth")), "")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("## Headline"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    body = "\n".join(lines[start + 1:end]).strip()
    title = lines[start][3:]
    plots = re.findall(r"!\[([^\]]+)\]\(([^)]+\.png)\)", report)
    plot_links = " · ".join(f"[{name}](benchmarks/report/{path})" for name, path in plots)
    goals = ""
    if "\n## Targets" in report:
        t = report.index("\n## Targets") + 1
        goals = report[t:report.find("\n## ", t + 1)].strip().replace("## ", "#### ", 1)
    sync = ""
    if "### SyncBatchNorm" in report:
        s = report.index("### SyncBatchNorm")
        nxt = report.find("\n## ", s)
        sync = report[s:nxt if nxt >= 0 else len(report)].strip().replace("### ", "#### ", 1)
        sync = re.sub(r"\]\(([^)/]+\.(?:png|json))\)", r"](benchmarks/report/\1)", sync)
    out = [
        "Measured by `fastnorm report` on the GPU machine; the whole report, with every table, the correctness",
        "check and the plots, is [benchmarks/report/report.md](benchmarks/report/report.md).",
        "",
        *facts,
        f"- {copy}" if copy else "",
        "",
        f"#### {title}",
        "",
        body,
        "",
        "![LayerNorm, bf16](benchmarks/report/layernorm_bfloat16.png)",
        "![RMSNorm, bf16](benchmarks/report/rmsnorm_bfloat16.png)",
        "",
        f"All plots: {plot_links}",
    ]
    if goals:
        out += ["", goals]
    if sync:
        out += ["", sync]
    return "\n".join(out)


def main() -> None:
    readme = README.read_text()
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"README.md lacks the {BEGIN} / {END} markers")
    new = headline(REPORT.read_text())
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    README.write_text(f"{head}{BEGIN}\n{new}\n{END}{tail}")
    print(f"README.md: headline from {REPORT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
