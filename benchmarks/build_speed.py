"""Build speed against MkDocs, edit-to-page latency in `serve`, and peak memory, on a generated course.

Run from the repository root:  python benchmarks/build_speed.py [--lessons 200] [--repeat 3] [--edits 30]
[--serve-sizes 200,2000] [--serve-only]

Both generators get the same 200 generated lessons (benchmarks/generated_course.py), and both
make the same kind of site from them: MkDocs (default theme) with footnotes, tables and code
highlighted by Pygments at build time, as coursegen does. coursegen also renders math to MathML,
which MkDocs leaves as text. Full builds run as separate processes from the command line,
startup included, `--repeat` times each, alternating; the headline ratio is the median over the
pairs; peak memory is the largest resident set of any process of a build.
Serve latency is measured the same way for both servers: append a marked sentence to one
lesson, then poll that page over HTTP until the sentence is there; coursegen's is also measured
on courses of every size in `--serve-sizes` in the same run, to show it does not grow with the
course. Nothing here is a test: the script prints figures and ratios; the targets are 3x faster
than MkDocs on full builds, and edit to page under 50 ms median at 200 and at 2,000 lessons, the
larger within 1.5x of the smaller.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
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

from generated_course import copy_engine_parts, write_course, write_mkdocs_project  # noqa: E402

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


def full_builds(
    course: Path, mkdocs: Path, mkdocs_plain: Path, repeat: int
) -> dict[str, list[tuple[float, int, float]]]:
    """Return each generator's full builds, `repeat` each, interleaved: (wall s, peak KiB, CPU s) per run.

    coursegen's first run compiles the templates and keeps them in .coursegen-cache/ for the runs
    after it, as on an author's machine. Both write to the same output folder, each replacing what
    the other left: creating a file costs very different times in different folders of one disk
    (seen here: 20 to 1,000 µs per file), and a build writes hundreds of files, so separate folders
    could decide the ratio.
    """
    out = course.parent / "out"
    commands = {
        "coursegen": [sys.executable, str(REPO / "build.py"), "--root", str(course), "build", "--out", str(out)],
        "mkdocs": [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(mkdocs / "mkdocs.yml"), "-d", str(out)],
        "mkdocs_plain": [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "-q",
            "-f",
            str(mkdocs_plain / "mkdocs.yml"),
            "-d",
            str(out),
        ],
    }
    runs: dict[str, list[tuple[float, int, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(timed_process(command))
    return runs


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
        latencies = edit_latencies(course / "lessons" / f"{number:03d}-lesson-{number}.md", page, edits, pause=0.05)
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


def report(full, in_process, serve, mk_serve, lessons: int) -> None:
    """Print the results as a Markdown table with ratios."""
    cg, mk = full["coursegen"], full["mkdocs"]
    latencies, rebuilds, serve_mem = serve
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"]
    print(f"\n{lessons} generated lessons; {os.cpu_count()} cores, load average {' '.join(load)}\n")
    print(row("measure", "coursegen", "MkDocs (default theme)", "ratio"))
    print(row("---", "---:", "---:", "---:"))
    # Each coursegen build ran just before an MkDocs build: the pair saw the same machine, so the
    # median of the pairs' ratios is the least disturbed by the machine's speed drifting over a run.
    paired = statistics.median(m[0] / c[0] for c, m in zip(cg, mk))
    print(
        row(f"full build, command line: median of {len(cg)} paired runs", "", "", f"{paired:.1f}x faster (target 3x)")
    )

    def median_wall(runs):
        return statistics.median(r[0] for r in runs)

    for label, pick in (
        ("median", median_wall),
        ("first run (coursegen compiles its templates)", lambda runs: runs[0][0]),
        ("fastest run", lambda runs: min(r[0] for r in runs)),
    ):
        print(
            row(
                f"full build, command line: {label}",
                f"{pick(cg):.2f} s",
                f"{pick(mk):.2f} s",
                f"{pick(mk) / pick(cg):.1f}x faster",
            )
        )
    plain = median_wall(full["mkdocs_plain"])
    print(
        row(
            "full build, median: MkDocs without build-time highlighting (highlight.js in the browser)",
            "",
            f"{plain:.2f} s",
            f"{plain / median_wall(cg):.1f}x faster",
        )
    )
    cg_cpu, mk_cpu = statistics.median(r[2] for r in cg), statistics.median(r[2] for r in mk)
    cg_mem, mk_mem = max(r[1] for r in cg), max(r[1] for r in mk)
    print(
        row(
            "CPU time of a full build, all processes (median)",
            f"{cg_cpu:.2f} s",
            f"{mk_cpu:.2f} s",
            f"{mk_cpu / cg_cpu:.1f}x less",
        )
    )
    print(
        row(
            "peak memory, full build (largest process)",
            f"{cg_mem / 1024:.0f} MiB",
            f"{mk_mem / 1024:.0f} MiB",
            f"{cg_mem / mk_mem:.2f}x",
        )
    )
    for label, seconds in in_process.items():
        print(row(label, f"{seconds:.2f} s", "", ""))
    med, p95 = statistics.median(latencies) * 1000, percentile(latencies, 0.95) * 1000
    mk_med = statistics.median(mk_serve) * 1000 if mk_serve else float("nan")
    print(
        row(
            f"serve: edit → page served, median of {len(latencies)}",
            f"{med:.0f} ms",
            f"{mk_med:.0f} ms" if mk_serve else "not run",
            f"{mk_med / med:.0f}x faster (target < 150 ms)" if mk_serve else "(target < 150 ms)",
        )
    )
    print(
        row(
            "serve: edit → page served, p95",
            f"{p95:.0f} ms",
            f"{percentile(mk_serve, 0.95) * 1000:.0f} ms" if mk_serve else "",
            "",
        )
    )
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
    parser.add_argument("--lessons", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="full builds per generator (median taken)")
    parser.add_argument("--edits", type=int, default=30, help="edits timed in coursegen serve")
    parser.add_argument("--mkdocs-edits", type=int, default=3, help="edits timed in mkdocs serve (0 skips it)")
    parser.add_argument("--serve-sizes", default="200,2000", help="course sizes for edit → page (comma-separated)")
    parser.add_argument("--serve-only", action="store_true", help="measure edit → page at --serve-sizes alone")
    args = parser.parse_args()
    sizes = sorted({int(size) for size in args.serve_sizes.split(",") if size.strip()})
    compile_coursegen()
    with tempfile.TemporaryDirectory() as tmp:
        if args.serve_only:
            report_sizes(serve_by_size(sizes, args.edits, Path(tmp)))
            return
        course = write_course(Path(tmp) / "course", args.lessons)
        copy_engine_parts(REPO, course)
        mkdocs = write_mkdocs_project(Path(tmp) / "mkdocs", args.lessons)
        mkdocs_plain = write_mkdocs_project(Path(tmp) / "mkdocs-plain", args.lessons, highlight=False)
        full = full_builds(course, mkdocs, mkdocs_plain, args.repeat)
        in_process = in_process_builds(course)
        number = edited_lesson(args.lessons)
        serve = coursegen_serve(course, args.edits, number)
        mk_serve = mkdocs_serve(mkdocs, args.mkdocs_edits, number) if args.mkdocs_edits else []
        report(full, in_process, serve, mk_serve, args.lessons)
        if sizes:
            report_sizes(serve_by_size(sizes, args.edits, Path(tmp)))


if __name__ == "__main__":
    main()
