"""Widgets: ```` ```widget overflow-slider g_min=-5 tile=16 ```` fences become live figures.

A core rule splits each widget fence's info string (shlex), checks the name and parameters
against `widgets/<name>/spec.yaml`, runs the widget's Python entry at build time for every
state it bakes, and stores all of it in `token.meta`; the fence renderer turns that into a
`<figure data-widget=…>` through `templates/partials/widget.html`, complete without JavaScript.
Problems carry the fence's line; nothing raises mid-parse. See docs/widgets.md.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from coursegen.author_code import AuthorCodeStopped
from coursegen.course_code import LIMIT_HINT, CalcError
from coursegen.errors import Problems, choices_hint
from coursegen.features.widgets import present as present_module
from coursegen.features.widgets.baking import EntryError, EntryRunner, baked, compact_states, entry_source, states_json
from coursegen.features.widgets.page_weight import baked_state_sizes, check_page_weight
from coursegen.features.widgets.site import CDN, SiteError, missing_hint, package_wheel, pyodide_site, said_in
from coursegen.features.widgets.spec import Widget, fmt, load_widgets, parse_value, widget_folders
from coursegen.model import per_unit
from coursegen.stages.assets import hashed_name
from coursegen.stages.config import CONFIG_NAME, config_line
from coursegen.stages.parse import highlight_code, register_fence, split_info
from coursegen.stages.render import template_problem
from coursegen.theme import files as theme
from coursegen.theme import messages

FENCE = "widget"
UNSTYLED = "unstyled_widgets"  # the page analysis (page.derived) naming widgets without a style.css
UNSTYLED_FIGURE = re.compile(r'<figure class="widget [^"]*" id="[^"]*" data-widget="([^"]+)"[^>]*\sdata-unstyled')
NAME = "widgets"  # this extension's name (coursegen.features.built_in): its own prepare data in ctx.extra

SESSION_HOOKS = ("prepare", "check", "add_files")  # these hooks also take the build's session (extensions.ModuleExtension)


@dataclass
class WidgetContext:
    """Per-build widget data: the registry, the entry runner, the page runtime settings."""

    root: Path
    widgets: dict[str, Widget]
    runner: EntryRunner
    runtime: dict = field(default_factory=dict)  # what the page's runtime needs: worker, Pyodide, wheel
    package: str = ""  # the course's Python package, "" when it has none
    missing: dict = field(default_factory=dict)  # Pyodide packages a self-hosted copy lacks: name → why
    broken: frozenset = frozenset()  # widgets whose folder is there but whose spec or files have problems

    @property
    def page_inputs(self) -> str:
        """Return a hash of what a page with a widget or an exercise reads here beside its own text: how it
        reaches Pyodide (the loader's integrity, the wheel) and what a self-hosted copy lacks (parse keys
        hold it, so a wheel removed or put back, or an edited pyodide.mjs, parses those pages again)."""
        return hashlib.sha256(repr((sorted(self.runtime.items()), sorted(self.missing.items()))).encode()).hexdigest()


def install(md) -> None:
    """Register the widget fence's checking core rule and its renderer, and the page analysis that tells
    lesson.html which of a page's widgets have no stylesheet."""
    md.core.ruler.push("widgets", check_widget_fences)
    register_fence(md, FENCE, render_widget)
    md.page_analysers[UNSTYLED] = unstyled_widgets


def unstyled_widgets(html: str, source=None) -> tuple[str, ...]:
    """Return the widgets on a page that have no style.css (their figures say so: data-unstyled)."""
    return tuple(sorted(set(UNSTYLED_FIGURE.findall(html))))


def present_asset() -> tuple[str, bytes]:
    """Return the site path and bytes of present.py, which live runs of widgets without a view of their own
    run after the entry (the same file the build runs: features/widgets/present.py)."""
    data = Path(present_module.__file__).read_bytes()
    return hashed_name("assets/widget-present.py", data), data


PRESENT_ASSET = present_asset()


def analyse(html: str, source) -> dict[str, tuple[int, int]]:
    """Return each widget's baked states on the page: bytes, and the line of its first fence (see page_weight)."""
    return baked_state_sizes(html, source)


def prepare(root: Path, config, problems: Problems, session) -> WidgetContext:
    """Load every widget spec and work out how the page reaches Pyodide and the course's package."""
    widgets = load_widgets(root, problems, session.memo)
    site = None
    if config is not None:
        try:
            site = pyodide_site(root, config.pyodide, pyodide_packages(widgets.values()), session.memo)
        except SiteError as err:
            problems.error(CONFIG_NAME, config_line(root, "pyodide:"), err.message, err.hint)
        if site and site.missing:
            problems.warning(
                CONFIG_NAME,
                config_line(root, "pyodide:"),
                f"the Pyodide copy in '{config.pyodide.path}' cannot serve what the widgets need "
                "for live Python: " + "; ".join(f"{name}: {why}" for name, why in site.missing.items()),
                missing_hint(config.pyodide, site.missing),
            )
    package = course_package(root, config)
    wheel = package_wheel(root, package, session.memo) if package else ("", b"")
    worker = theme.find(root, "assets/pyodide-worker.js")
    runtime = {
        "worker": hashed_name("assets/pyodide-worker.js", worker.read_bytes()) if worker else "",
        "indexURL": site.index_url if site else "",
        "integrity": site.integrity if site else "",
        "wheel": wheel[0],
        "module": package,
    }
    broken = frozenset(folder.name for folder in widget_folders(root)) - set(widgets)
    return WidgetContext(root, widgets, EntryRunner(), runtime, package, site.missing if site else {}, broken)


def browser_python(ctx) -> tuple[dict, dict]:
    """Return how a page reaches Python in the browser (worker, Pyodide, wheel) and the Pyodide packages a
    self-hosted copy lacks, as this build's widgets found them: what exercises (questions) run on too."""
    context: WidgetContext | None = ctx.extra.get(NAME)
    return (context.runtime, context.missing) if context is not None else ({}, {})


def csp(config) -> dict[str, list[str]]:
    """Return what live Python needs in the pages' policy: WebAssembly, and the pinned CDN folder
    (not the whole host) when Pyodide comes from there."""
    cdn = [CDN.format(version=config.pyodide.version)] if config.pyodide.source == "cdn" else []
    return {"script-src": ["'wasm-unsafe-eval'", *cdn], "connect-src": cdn}


def course_package(root: Path, config) -> str:
    """Return the name of the course's own Python package, or "" when the course has none."""
    name = config.python.package if config is not None else "kernels"
    return name if (root / name / "__init__.py").is_file() else ""


def pyodide_packages(widgets) -> list[str]:
    """Return the Pyodide packages the given widgets declare, each once, sorted."""
    return sorted({name for widget in widgets for name in widget.packages})


def check(course, root: Path, problems: Problems, session) -> None:
    """Warn about pages made large by their baked states (see page_weight)."""
    check_page_weight(course, problems, session.memo)


def add_files(course, root: Path, assets, problems: Problems, session) -> None:
    """Add each used widget's view and stylesheet, the course package's wheel and (self-hosted) Pyodide, which
    exercises use too (with their own packages; the learner's code does not import the course package)."""
    uses = per_unit(session.memo, "widget uses", course.written, _uses) if course else []  # serve: replaced units
    used = sorted({name for widgets, _ in uses for name in widgets})
    exercises = [question for _, questions in uses for question in questions]
    for name in used:
        for file in ("view.js", "style.css"):
            if (root / "widgets" / name / file).is_file():  # a widget without a look of its own may have neither
                assets.add(f"widgets/{name}/{file}", (root / "widgets" / name / file).read_bytes())
    if not used and not exercises:
        return
    if any(not (root / "widgets" / name / "view.js").is_file() for name in used):
        assets.files[PRESENT_ASSET[0]] = PRESENT_ASSET[1]  # live runs of those widgets fetch it (widgets.js)
    package = course_package(root, course.config)
    if package and used:
        site_path, data = package_wheel(root, package, session.memo)
        assets.files[site_path] = data
    specs = load_widgets(root, Problems(), session.memo)  # prepare reported their problems
    packages = {
        *pyodide_packages(specs[name] for name in used if name in specs),
        *(name for question in exercises for name in question.packages),
    }
    try:
        site = pyodide_site(root, course.config.pyodide, sorted(packages), session.memo)
    except SiteError:
        return  # prepare reported it
    for site_path, source in site.files.items():
        assets.files[site_path] = source.read_bytes()


def _uses(unit) -> tuple[tuple[str, ...], tuple]:
    """Return the widgets a unit's page shows and its exercises (what add_files looks for)."""
    return tuple(unit.page.widgets), tuple(q for q in unit.page.questions if q.kind == "exercise")


# ---- parse: check fences and bake their results ---------------------------------------------


def check_widget_fences(state) -> None:
    """Validate every widget fence and store its parameters and baked states in `token.meta`."""
    env = state.env
    for token in state.tokens:
        if token.type == "fence" and split_info(token.info)[0] == FENCE:
            line = token.map[0] + 1 if token.map else 1
            token.meta["widget"] = parse_fence(token, env["ctx"].extra[NAME], env, line)


def parse_fence(token, context: WidgetContext, env: dict, line: int) -> dict | None:
    """Return {widget, params, states} for one fence, or None after recording its problems."""
    problems, path = env["problems"], env["path"]
    try:
        words = shlex.split(split_info(token.info)[1])
    except ValueError as err:
        problems.error(path, line, f"cannot read the widget fence: {err}")
        return None
    if not words:
        problems.error(path, line, "widget fence names no widget", choices_hint("", context.widgets, "widgets"))
        return None
    name, settings = words[0], words[1:]
    widget = context.widgets.get(name)
    if widget is None and name in context.broken:
        return None  # a widget all the same: its problems are reported once, at its spec
    if widget is None:
        problems.error(path, line, f"unknown widget '{name}'", choices_hint(name, context.widgets, "widgets"))
        return None
    if token.content.strip():
        problems.error(
            path,
            line,
            f"widget '{name}' takes no body",
            "write its parameters on the fence line, e.g. ```widget " + name + " name=value",
        )
    params = parse_params(widget, settings, problems, path, line)
    if params is None:
        return None
    states = bake_states(widget, params, context.runner, env["ctx"].python, problems, path, line)
    env["widgets"].append(name)
    return {"widget": widget, "params": params, "states": states} if states else None


def parse_params(widget: Widget, settings: list[str], problems, path: str, line: int) -> dict | None:
    """Return the widget's parameters (defaults filled in) from `name=value` words, or None."""
    params, ok = widget.defaults(), True
    names = [p.name for p in widget.params]
    seen = set()
    for word in settings:
        key, eq, text = word.partition("=")
        param = widget.param(key)
        if not eq:
            problems.error(
                path,
                line,
                f"widget parameter '{word}' must be written as name=value",
                f"parameters of {widget.name} are: " + ", ".join(names),
            )
        elif param is None:
            problems.error(
                path,
                line,
                f"unknown parameter '{key}' for widget '{widget.name}'",
                choices_hint(key, names, f"parameters of {widget.name}"),
            )
        elif key in seen:
            problems.error(path, line, f"parameter '{key}' of widget '{widget.name}' is given twice")
        else:
            seen.add(key)
            try:
                params[key] = parse_value(param, text)
                continue
            except ValueError as err:
                problems.error(
                    path,
                    line,
                    f"parameter '{key}' of widget '{widget.name}' {err}, found {text!r}",
                    f"{param.label}: {param.describe()}",
                )
        ok = False
    return params if ok else None


def bake_states(widget: Widget, params: dict, runner: EntryRunner, python, problems, path: str, line: int):
    """Return [(params, baked result)] for every state the page carries (run through the build's
    CourseCode, `python`), or None on failure."""
    grid, states = widget.grid(params), []
    try:
        for state, result in runner.run_each(widget, grid, python):
            states.append((state, baked(widget, result)))
    except (EntryError, CalcError, AuthorCodeStopped) as err:
        shown = " ".join(f"{k}={fmt(v)}" for k, v in grid[len(states)].items())
        if isinstance(err, AuthorCodeStopped) and err.timed_out:
            problems.error(
                path,
                line,
                f"widget '{widget.name}' {err.message} for {shown}" + (f" (at {err.where})" if err.where else ""),
                LIMIT_HINT,
            )
        elif isinstance(err, AuthorCodeStopped):
            problems.error(path, line, f"widget '{widget.name}' failed for {shown}: it {err.located()}")
        else:
            line_of_entry = getattr(err, "line", 0)  # an EntryError's; a CalcError has none
            where = f" (widgets/{widget.name}/widget.py line {line_of_entry})" if line_of_entry else ""
            problems.error(path, line, f"widget '{widget.name}' failed for {shown}: {err.message}{where}", err.hint)
        return None
    return states


# ---- render --------------------------------------------------------------------------------


def render_widget(token, env: dict) -> str:
    """Return the widget's figure: controls, the build-time result, live-Python panel, its code."""
    data = token.meta.get("widget")
    if not data:
        return '<p class="widget-error">This widget could not be built.</p>\n'
    context: WidgetContext = env["ctx"].extra[NAME]
    widget = data["widget"]
    ids = env.setdefault("widget_ids", {})
    ids[widget.name] = ids.get(widget.name, 0) + 1
    element_id = f"widget-{widget.name}" + (f"-{ids[widget.name]}" if ids[widget.name] > 1 else "")
    first_on_page = not env.get("widget_runtime_done")
    env["widget_runtime_done"] = True
    try:
        html = render_figure(context, data, element_id, first_on_page, env)
    except Exception as err:
        problem = template_problem(err, context.root, also=("widgets",))
        if problem is None:
            raise  # raised nowhere in the course's templates: a bug, with its traceback
        env["problems"].error(problem.path, problem.line, problem.message)
        return '<p class="widget-error">This widget could not be built.</p>\n'
    return html if html.endswith("\n") else html + "\n"


def render_figure(context: WidgetContext, data: dict, element_id: str, first_on_page: bool, env: dict) -> str:
    """Return the figure's HTML from templates/partials/widget.html and the widget's result.html
    (the first figure on a page also carries the runtime: the Pyodide packages its widgets need)."""
    widget, params = data["widget"], data["params"]
    return env["ctx"].templates.get_template("partials/widget.html").render(
        widget=widget,
        params=params,
        id=element_id,
        result=next(result for state, result in data["states"] if state == params),
        params_json=json.dumps(params, separators=(",", ":")),
        spec_json=spec_json(widget),
        states_json=Markup(states_json(compact_states(widget, data["states"]))),
        view=view_url(context.root, widget),
        code=Markup(highlight_code(entry_source(widget), "python", None, env["ctx"].memo)),
        package=context.package,
        runtime_json=Markup(states_json(page_runtime(context, env["widgets"], messages.texts(env)))) if first_on_page else "",
        messages=messages.texts(env),
    )


def view_url(root: Path, widget: Widget) -> str:
    """Return the site path of the widget's view: its own view.js, or the theme's assets/widget-view.js."""
    if widget.own_look:
        return hashed_name(f"assets/widgets/{widget.name}/view.js", (widget.folder / "view.js").read_bytes())
    generic = theme.find(root, "assets/widget-view.js")
    assert generic is not None, "the packaged theme has assets/widget-view.js"
    return hashed_name("assets/widget-view.js", generic.read_bytes())


def page_runtime(context: WidgetContext, names, catalogue: dict[str, str]) -> dict:
    """Return the page's runtime settings: its widgets' Pyodide packages, those this site lacks (why, in
    the language of the course's `catalogue`), and where present.py is when a widget has no view of its own."""
    widgets = [context.widgets[name] for name in names]
    packages = pyodide_packages(widgets)
    missing = said_in({name: context.missing[name] for name in packages if name in context.missing}, catalogue)
    present = {"present": PRESENT_ASSET[0]} if any(not widget.own_look for widget in widgets) else {}
    return {**context.runtime, "packages": packages, **({"missing": missing} if missing else {}), **present}


def spec_json(widget: Widget) -> str:
    """Return the parameters' types and ranges as JSON, for the view's controls."""
    return json.dumps(
        {
            p.name: {"type": p.type, "min": p.min, "max": p.max, "step": p.step, "choices": list(p.choices)}
            for p in widget.params
        },
        separators=(",", ":"),
    )
