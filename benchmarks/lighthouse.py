"""Lighthouse scores of a built course: the course map, a lesson and a review.

Run from the repository root (after `npm ci`, which installs the pinned lighthouse@12.2.3):

    python benchmarks/lighthouse.py [--root COURSE] [--offline] [--no-peer]

It copies the course, sets `base_url` to the address it serves it at (so canonical links are real),
builds it, serves it on 127.0.0.1 and runs Lighthouse against Debian's Chromium on each page, printing
the four category scores and, for any category below 100, the audits that cost points. As a peer
measured in the same run it builds the same lessons with MkDocs (its default theme) and scores its
first lesson page. It also prints the search index's size (its folder, search/) against the pages' total size.
Targets: 100 for accessibility and best practices, at least 95 for performance and SEO.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from coursegen.cli import main as build_cli  # noqa: E402
from coursegen.serve.server import make_server  # noqa: E402

LIGHTHOUSE = REPO / "node_modules" / ".bin" / "lighthouse"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
TARGETS = {"performance": 95, "accessibility": 100, "best-practices": 100, "seo": 95}
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage"


def parse(argv):
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=REPO, help="the course folder (default: the sample course)")
    parser.add_argument("--offline", action="store_true", help="build with --offline (self-hosted Pyodide)")
    parser.add_argument("--no-peer", action="store_true", help="skip the MkDocs peer")
    return parser.parse_args(argv)


def serve(folder: Path):
    """Serve `folder` on a free port in a daemon thread; return (server, base URL)."""
    server = make_server(folder, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def build_course(root: Path, work: Path, base: str, offline: bool) -> Path:
    """Copy the course into `work`, point base_url at `base`, build it; return its site folder."""
    course = work / "course"
    shutil.copytree(root, course, ignore=shutil.ignore_patterns("site", "node_modules", ".git", "tests"))
    if (root / "node_modules").exists():
        (course / "node_modules").symlink_to(root / "node_modules")
    config = course / "course.yaml"
    text = re.sub(r"(?m)^base_url:.*\n", "", config.read_text())
    config.write_text(f"base_url: {base}course/\n" + text)
    args = ["--root", str(course), "build", "--out", str(work / "serve" / "course")]
    if build_cli(args + (["--offline"] if offline else [])) != 0:
        sys.exit("the course did not build")
    return work / "serve" / "course"


def build_peer(root: Path, work: Path) -> str | None:
    """Build the course's lessons with MkDocs into work/serve/peer; return the first lesson's path."""
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        return None
    docs = work / "peer" / "docs"
    docs.mkdir(parents=True)
    lessons = sorted((root / "lessons").glob("*.md"))
    for lesson in lessons:
        shutil.copy(lesson, docs / lesson.name)
    (docs / "index.md").write_text("# Course\n")
    (work / "peer" / "mkdocs.yml").write_text("site_name: Peer\ntheme: mkdocs\n")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "-q",
            "-f",
            str(work / "peer" / "mkdocs.yml"),
            "-d",
            str(work / "serve" / "peer"),
        ],
        check=True,
    )
    return f"peer/{lessons[0].stem}/" if lessons else None


def lighthouse(url: str) -> dict:
    """Return {category: score 0-100, 'lost': [audit titles that cost points]} for one URL."""
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROMIUM", "/usr/bin/chromium")}
    run = subprocess.run(
        [
            str(LIGHTHOUSE),
            url,
            "--quiet",
            "--output=json",
            "--output-path=stdout",
            f"--only-categories={','.join(CATEGORIES)}",
            f"--chrome-flags={CHROME_FLAGS}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if run.returncode != 0:
        return {"error": run.stderr.strip().splitlines()[-1:] or ["lighthouse failed"]}
    report = json.loads(run.stdout)
    scores = {c: round(report["categories"][c]["score"] * 100) for c in CATEGORIES}
    lost = [
        f"{c}: {report['audits'][ref['id']]['title']}"
        for c in CATEGORIES
        for ref in report["categories"][c]["auditRefs"]
        if ref["weight"] and (report["audits"][ref["id"]]["score"] or 0) < 1
    ]
    return {**scores, "lost": lost}


def pages_to_score(site: Path) -> list[tuple[str, str]]:
    """Return (label, path) for the course map, the first lesson and the first review."""
    index = (site / "index.html").read_text()
    units = re.findall(
        r'course-map-number">(Lesson|Review) \d+</span>\s*<a class="course-map-title" href="([^"]+)"', index
    )
    pages = [("course map", "index.html")]
    for kind in ("Lesson", "Review"):
        found = next((href for k, href in units if k == kind), None)
        if found:
            pages.append((kind.lower(), found))
    return pages


def index_size(site: Path) -> str:
    """Return the search index's size (all its files) and its share of the pages' HTML."""
    size = sum(p.stat().st_size for p in (site / "search").rglob("*") if p.is_file())
    html = sum(p.stat().st_size for p in site.glob("*.html"))
    return f"search index {size / 1024:.1f} KiB, pages' HTML {html / 1024:.1f} KiB, ratio {size / html:.2f}"


def print_row(label: str, result: dict) -> None:
    """Print one page's scores, marking those under target, then the audits that cost points."""
    if "error" in result:
        print(f"{label:<22} lighthouse failed: {result['error']}")
        return
    cells = [f"{result[c]:>5}{'' if result[c] >= TARGETS[c] else '!'}" for c in CATEGORIES]
    print(f"{label:<22}" + "".join(f"{cell:>16}" for cell in cells))
    for audit in result["lost"]:
        print(f"{'':<24}- {audit}")


def main(argv=None) -> int:
    """Build, serve, score; return 0 (a benchmark reports, it does not fail)."""
    args = parse(argv)
    if not LIGHTHOUSE.exists():
        sys.exit("lighthouse is missing: run 'npm ci' first")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "serve").mkdir()
        server, base = serve(work / "serve")
        try:
            site = build_course(args.root.resolve(), work, base, args.offline)
            peer = None if args.no_peer else build_peer(args.root.resolve(), work)
            print(
                "Lighthouse "
                + subprocess.run([str(LIGHTHOUSE), "--version"], capture_output=True, text=True).stdout.strip()
                + ", targets: "
                + ", ".join(f"{c} {t}" for c, t in TARGETS.items())
                + " ('!' marks a miss)"
            )
            print(f"{'page':<22}" + "".join(f"{c:>16}" for c in CATEGORIES))
            for label, path in pages_to_score(site):
                print_row(label, lighthouse(f"{base}course/{path}"))
            if peer:
                print_row("peer: MkDocs lesson", lighthouse(base + peer))
            print(index_size(site))
            print(
                f"load average over the last minute: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
                " (performance scores drop on a busy machine)"
            )
        finally:
            server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
