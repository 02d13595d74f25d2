"""A course's own extensions (course.yaml `extensions:`), extra callout kinds and extra CSP sources."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest
from helpers import FIXTURES, run_cli

from coursegen.errors import ContentError
from coursegen.pipeline import build_site
from coursegen.session import Session

EXTENSION = '''"""A course extension: a {kbd} role, per-build data, a check, a file and a CSP source."""
from markupsafe import escape

from coursegen.stages.roles import register_role


def install(md):
    register_role(md, "kbd", lambda token, env, line: f"<kbd>{escape(token.content)}</kbd>"
                  + env["ctx"].extra["keys"]["mark"])


def prepare(root, config, problems):
    return {"mark": "<!-- keys -->"}


def check(course, root, problems):
    problems.warning("lessons/01-first.md", 1, f"{len(course.written)} units checked by the keys extension")


def add_files(course, root, assets, problems):
    assets.files["keys.txt"] = b"ctrl alt del\\n"


def csp(config):
    return {"img-src": ["https://img.example.org"]}
'''


@pytest.fixture
def course(tmp_path):
    shutil.copytree(FIXTURES / "mini", tmp_path / "mini")
    return tmp_path / "mini"


def configure(course, text: str) -> None:
    config = course / "course.yaml"
    config.write_text(config.read_text() + text)


def put(course, text: str) -> None:
    lesson = course / "lessons" / "02-second.md"
    lesson.write_text(lesson.read_text().replace("Text.", text))


def policy(page: str) -> str:
    return html.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1))


@pytest.mark.parametrize("entry", ["extensions/keys.py", "keys"])
def test_an_extension_file_or_module_of_the_course_uses_every_hook(course, entry):
    if entry.endswith(".py"):
        (course / "extensions").mkdir()
        (course / "extensions" / "keys.py").write_text(EXTENSION)
    else:
        (course / "keys.py").write_text(EXTENSION)  # a module name, found in the course folder
    configure(course, f"extensions: [{entry}]\n")
    put(course, "Press {kbd}`Ctrl+C`.")
    result = build_site(course)
    page = result.outputs["second.html"].decode()
    assert "<kbd>Ctrl+C</kbd><!-- keys -->" in page
    assert result.outputs["keys.txt"] == b"ctrl alt del\n"
    assert "img-src 'self' data: https://img.example.org;" in policy(page)
    assert [w.message for w in result.warnings] == ["3 units checked by the keys extension"]


NEW_EVENTS = '''"""A course extension joining the events beyond the first five: configure, analyse, page_context."""
import dataclasses


def configure(config, options):
    return dataclasses.replace(config, title=config.title + " (configured)")


def analyse(html, source):
    return html.count("<p>")


def check(course, root, problems):
    counts = {unit.slug: unit.page.derived["counting"] for unit in course.written}
    problems.warning("lessons/01-first.md", 1, f"paragraphs per page: {sorted(counts.items())}")


def page_context(config):
    return {"counting_note": "counted"}
'''


def test_an_extension_rewrites_the_configuration_analyses_each_page_and_gives_templates_values(course):
    (course / "counting.py").write_text(NEW_EVENTS)
    (course / "templates").mkdir()
    (course / "templates" / "404.html").write_text("{{ config.title }}: {{ counting_note }}\n")
    configure(course, "extensions: [counting.py]\n")
    result = build_site(course)
    assert "(configured)</title>" in result.outputs["index.html"].decode()
    assert result.outputs["404.html"] == b"Mini course (configured): counted\n"
    (warning,) = [w.message for w in result.warnings]  # each page's analysis, kept as page.derived["counting"]
    assert warning == "paragraphs per page: [('check', 1), ('first', 4), ('second', 2)]"


def test_a_configure_event_that_raises_is_a_problem_at_its_line(course, capsys):
    (course / "bad_configure.py").write_text("def configure(config, options):\n    raise ValueError('no')\n")
    configure(course, "extensions: [bad_configure.py]\n")
    status, _, err = run_cli(capsys, "--root", course, "build")
    assert status == 1
    assert "bad_configure.py:2: extension 'bad_configure' failed in configure: ValueError: no" in err
    assert "Traceback" not in err


def test_start_is_given_the_build_s_one_course_code_and_only_when_a_page_runs_the_course_s_python(course):
    (course / "starting.py").write_text(
        "from pathlib import Path\n\n\ndef start(root, config, python):\n"
        "    Path(root, 'started.txt').write_text(f'{type(python).__name__} {python.package}')\n"
    )
    configure(course, "extensions: [starting.py]\n")
    build_site(course)
    assert not (course / "started.txt").exists()  # no page has {calc}, a widget or an exercise
    put(course, "Two is {calc}`1 + 1`.")
    assert "<span" in build_site(course).outputs["second.html"].decode()
    assert (course / "started.txt").read_text() == "CourseCode kernels"


def test_the_dispatcher_merges_answers_in_order_and_refuses_arguments_out_of_step_with_the_declaration():
    from coursegen.extensions import Extension, Extensions

    class First(Extension):
        def page_context(self, config):
            return {"a": 1, "b": 1}

    class Second(Extension):
        def page_context(self, config):
            return {"b": 2}

    dispatch = Extensions([First(), Extension(), Second()])
    assert dispatch.page_context(None) == {"a": 1, "b": 2}
    with pytest.raises(TypeError, match="page_context takes"):
        dispatch._answers("page_context")


def test_an_extension_that_defines_only_one_hook_is_fine(course):
    (course / "only_files.py").write_text(
        "def add_files(course, root, assets, problems):\n    assets.files['hello.txt'] = b'hi'\n"
    )
    configure(course, "extensions: [only_files]\n")
    assert build_site(course).outputs["hello.txt"] == b"hi"


@pytest.mark.parametrize(
    "source, expected",
    [
        (None, "course.yaml:{line}: extension 'extensions/none.py' cannot be loaded: FileNotFoundError"),
        (
            "import nowhere_to_be_found\n",  # at the line of the extension that failed, as a hook's failure is
            "extensions/none.py:1: extension 'extensions/none.py' cannot be loaded: ModuleNotFoundError",
        ),
        (
            "def check(course, root, problems):\n    return 1 / 0\n",
            "extensions/none.py:2: extension 'none' failed in check: ZeroDivisionError: division by zero",
        ),
        (
            "def install(md):\n\n    raise ValueError('no syntax today')\n",
            "extensions/none.py:3: extension 'none' failed in install: ValueError: no syntax today",
        ),
    ],
)
def test_a_broken_extension_is_a_located_problem(course, capsys, source, expected):
    if source is not None:
        (course / "extensions").mkdir()
        (course / "extensions" / "none.py").write_text(source)
    configure(course, "extensions:\n  - extensions/none.py\n")
    line = len((course / "course.yaml").read_text().splitlines())
    status, _, err = run_cli(capsys, "--root", course, "build")
    assert status == 1 and err.startswith(expected.format(line=line)), err
    assert "Traceback" not in err


def test_extra_callouts_from_course_yaml(course):
    configure(course, "callouts:\n  warning: Watch out\n  tip:\n")
    put(course, "::: warning\nHot.\n:::\n\n::: tip Try this\nCold.\n:::\n")
    page = build_site(course).outputs["second.html"].decode()
    assert (
        '<aside class="callout callout-warning" aria-label="Watch out">\n<p class="callout-title">Watch out</p>' in page
    )
    assert '<aside class="callout callout-tip" aria-label="Try this">' in page


def test_a_callout_not_declared_is_still_an_error(course):
    put(course, "::: warning\nHot.\n:::\n")
    with pytest.raises(ContentError, match="warning"):
        build_site(course)


def test_declaring_a_callout_during_serve_parses_the_pages_again(course):
    cache = Session()
    put(course, "::: tip\nCold.\n:::\n")
    with pytest.raises(ContentError):
        build_site(course, session=cache)
    configure(course, "callouts: [tip]\n")
    assert "callout-tip" in build_site(course, session=cache).outputs["second.html"].decode()


def test_csp_sources_from_course_yaml_widen_only_their_directive(course):
    configure(
        course, "csp:\n  img-src: [https://images.example.org]\n  media-src: [https://video.example.org/clips/]\n"
    )
    page = build_site(course).outputs["first.html"].decode()
    assert "img-src 'self' data: https://images.example.org;" in policy(page)
    assert policy(page).endswith("media-src 'self' https://video.example.org/clips/")
    assert "script-src 'self' 'sha256-" in policy(page) and "images" not in policy(page).split("img-src")[0]


@pytest.mark.parametrize(
    "settings, message",
    [
        ("csp:\n  img-sorc: [https://a.example]\n", "unknown CSP directive 'img-sorc'"),
        ("csp:\n  img-src: [\"'unsafe-inline'\"]\n", "CSP img-src source \"'unsafe-inline'\" is not an allowed source"),
        ("csp:\n  script-src: [https://a.example; object-src *]\n", "is not an allowed source"),
        ("callouts: [Warning!]\n", "callout 'Warning!' must be a lowercase name"),
    ],
)
def test_bad_csp_and_callout_settings_are_errors_at_their_line(course, capsys, settings, message):
    configure(course, settings)
    line = len((course / "course.yaml").read_text().splitlines())
    status, _, err = run_cli(capsys, "--root", course, "check")
    assert status == 1 and err.startswith("course.yaml:") and message in err, err
    assert int(err.split(":")[1]) in (line, line - 1)


MEDIA = (
    "![A chart](https://images.example.org/chart.png)\n\n"
    '<video src="https://video.example.org/clips/tide.mp4" poster="https://images.example.org/p.png"></video>\n\n'
    '<iframe src="https://maps.example.net/embed"></iframe>\n'
)


def test_check_warns_about_every_resource_the_policy_would_block(course, capsys):
    put(course, MEDIA)
    status, _, err = run_cli(capsys, "--root", course, "check")
    assert status == 0
    warnings = [line for line in err.splitlines() if not line.startswith(" ")]
    lesson = "lessons/02-second.md"
    assert warnings == [
        f"{lesson}:12: warning: the browser will block https://images.example.org/chart.png: the page's img-src does not allow it",
        f"{lesson}:14: warning: the browser will block https://video.example.org/clips/tide.mp4: the page's default-src does not allow it",
        f"{lesson}:14: warning: the browser will block https://images.example.org/p.png: the page's img-src does not allow it",
        f"{lesson}:16: warning: the browser will block https://maps.example.net/embed: the page's default-src does not allow it",
    ]
    assert "csp: {img-src: [https://images.example.org]}" in err
    assert run_cli(capsys, "--root", course, "check", "--strict")[0] == 1


def test_sources_allowed_in_course_yaml_silence_the_warnings(course, capsys):
    put(course, MEDIA)
    configure(
        course,
        "csp:\n  img-src: [https://images.example.org]\n  media-src: [https://video.example.org/clips/]\n"
        "  frame-src: [https://maps.example.net/embed]\n",
    )
    status, _, err = run_cli(capsys, "--root", course, "check", "--strict")
    assert status == 0 and err == "", err


@pytest.mark.parametrize(
    "url, sources, allowed",
    [
        ("img/a.png", ["'self'"], True),
        ("https://a.example/x.png", ["'self'"], False),
        ("https://a.example/x.png", ["https:"], True),
        ("https://cdn.a.example/x.png", ["https://*.a.example"], True),
        ("https://a.example/media/x.png", ["https://a.example/media/"], True),
        ("https://a.example/other/x.png", ["https://a.example/media/"], False),
        ("http://a.example/x.png", ["https://a.example"], False),
        ("data:image/png;base64,AAAA", ["'self'", "data:"], True),
    ],
)
def test_source_matching(url, sources, allowed):
    from coursegen.stages.csp import allowed_by

    assert allowed_by(url, sources) is allowed


@pytest.mark.parametrize(
    "html, may_load",
    [
        ('<p>Plain text with <a href="https://a.example">a link</a> and src = here.</p>', False),
        ('<img src="img/a.png" data-x="https://a.example/x.png">', False),  # its own file; a data-* attribute
        ('<img data-src="https://a.example/x.png">', True),  # a name that ends in -src: maybe (the parser decides)
        ('<p class="data">datasrc=https://a.example</p>', False),  # not a whole attribute name
        ('<img SRC = "HTTPS://a.example/x.png">', True),
        ("<img src=//a.example/x.png>", True),
        ('<video poster="data:image/png;base64,AAAA">', True),
        ("<OBJECT>", True),  # refused wherever it points
        ('<img srcset="a.png 1x">', True),
        ('<LINK rel="icon" href="x.png">', True),
        ('<embed type="x">', True),
        ('<img src="&#104;ttps://a.example/x.png">', True),  # an entity hides the scheme
        ('<img\tsrc=\n"https://a.example/x.png">', True),
    ],
)
def test_only_pages_that_may_load_a_blocked_resource_go_through_the_html_parser(html, may_load):
    from coursegen.stages.csp import may_load_blocked, resources

    assert may_load_blocked(html) is may_load
    if not may_load:  # skipping the parser loses nothing: all it finds are the site's own files
        from coursegen.stages.csp import _Resources, allowed_by

        parser = _Resources()
        parser.feed(html)
        assert all(allowed_by(url, ["'self'"]) for url, _ in parser.found) and resources(html) == []


def test_a_role_of_an_extension_that_raises_while_a_page_is_parsed_is_a_problem_at_that_page(course, capsys):
    (course / "extensions").mkdir()
    (course / "extensions" / "shout.py").write_text(
        "from coursegen.stages.roles import register_role\n\n\ndef install(md):\n"
        "    register_role(md, 'shout', lambda token, env, line: token.content.upper() + 1)\n"
    )
    configure(course, "extensions: [extensions/shout.py]\n")
    put(course, "Say {shout}`hello`.")
    status, _, err = run_cli(capsys, "--root", course, "build")
    assert status == 1 and "Traceback" not in err, err
    assert "lessons/02-second.md:1: an extension failed on this page: TypeError:" in err
    assert "hint: at extensions/shout.py:5" in err


# ---- what course.yaml's csp: may add, directive by directive -----------------------------------


@pytest.mark.parametrize(
    "directive, source, refused",
    [
        ("script-src", "https://cdn.example.org/lib/", False),
        ("script-src", "'self'", False),
        ("script-src", "data:", True),
        ("script-src", "blob:", True),
        ("script-src", "https:", True),
        ("script-src", "https://*.example.org", True),
        ("script-src", "http://cdn.example.org", True),
        ("worker-src", "blob:", False),  # the policy holds it already, for the widgets' worker
        ("worker-src", "data:", True),
        ("default-src", "https:", True),
        ("default-src", "https://*.example.org", True),
        ("frame-src", "https://*.example.org", False),
        ("frame-src", "data:", True),
        ("style-src", "blob:", True),
        ("img-src", "data:", False),
        ("img-src", "https:", False),
        ("img-src", "https://*.example.org", False),
        ("media-src", "blob:", False),
        ("connect-src", "http://api.example.org", False),
    ],
)
def test_csp_sources_that_could_run_code_the_course_did_not_ship_are_refused_by_directive(directive, source, refused):
    from coursegen.stages.config import CSP_SOURCE, csp_refusal

    assert CSP_SOURCE.match(source)
    assert bool(csp_refusal(directive, source)) is refused


def test_a_wildcard_that_is_no_subdomain_is_no_source_at_all(course, capsys):
    configure(course, 'csp:\n  img-src: ["https://*"]\n')
    status, _, err = run_cli(capsys, "--root", course, "check")
    assert status == 1 and "CSP img-src source 'https://*' is not an allowed source" in err, err


# ---- extensions out of time, in serve's rebuilds and asleep where no exception reaches ----------


def test_an_extension_hook_out_of_time_in_a_serve_rebuild_is_reported_and_the_next_rebuild_recovers(course):
    from coursegen.pipeline import BuildOptions
    from coursegen.serve.server import LiveServer

    (course / "spin.py").write_text(
        "import os\n\n\ndef check(course, root, problems):\n    while os.path.exists(root / 'spin'):\n        pass\n"
    )
    configure(course, "extensions: [spin.py]\n")
    server = LiveServer(course, BuildOptions(), port=0, log=lambda text: None).start(watch=False)
    try:
        (course / "spin").write_text("")
        started = time.monotonic()
        event = {}
        rebuild = threading.Thread(target=lambda: event.update(server.rebuild(["spin"])), daemon=True)
        rebuild.start()  # from a thread of its own, as serve's watcher rebuilds
        rebuild.join(30)
        assert not rebuild.is_alive() and time.monotonic() - started < 2 + 10  # the course's limit is 2 s
        assert event["type"] == "error"
        assert event["problems"][0].startswith("spin.py:5: extension 'spin' did not finish its check hook within 2 s")
        (course / "spin").unlink()
        assert server.rebuild(["spin"])["type"] == "built"
    finally:
        server.stop()


def test_an_extension_asleep_past_its_limit_ends_the_build_with_its_place(course):
    (course / "nap.py").write_text("import time\n\n\ndef prepare(root, config, problems):\n    time.sleep(600)\n")
    configure(course, "extensions: [nap.py]\n")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "coursegen", "--root", str(course), "build"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and time.monotonic() - started < 30
    assert done.stderr.startswith("nap.py:5: extension 'nap' did not finish its prepare hook within 2 s\n"), done.stderr
    assert "1 problem(s); nothing was written" in done.stderr and "Traceback" not in done.stderr
    assert not (course / "site").exists()


def test_a_hook_that_returns_in_time_is_never_interrupted_later(course):
    from coursegen import watchdog

    (course / "quick.py").write_text("def prepare(root, config, problems):\n    return 1\n")
    configure(course, "extensions: [quick.py]\n")
    for _ in range(3):
        build_site(course)
    time.sleep(2 + watchdog.GRACE + 0.5)  # past every limit those builds' hooks had: nothing lands here
