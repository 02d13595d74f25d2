"""docs/extensions.md against the code: every event, parser attribute, env key, analysis, field and member
an extension meets is documented, and nothing documented is missing from the code."""

from __future__ import annotations

import dataclasses
import inspect
import re

from helpers import REPO

from coursegen import extensions
from coursegen.errors import Problems
from coursegen.model import Course, Page, Unit
from coursegen.pipeline import build_site
from coursegen.stages import parse, roles
from coursegen.stages.assets import Assets
from coursegen.stages.parse import CourseParser, CourseRenderer, ParseContext, make_markdown

REFERENCE = (REPO / "docs" / "extensions.md").read_text(encoding="utf-8")


def section(heading: str) -> str:
    """Return the text under `heading` up to the next heading of its level or above."""
    level = heading.split()[0]
    start = REFERENCE.index(heading + "\n") + len(heading) + 1
    following = re.search(rf"^#{{1,{len(level)}}} ", REFERENCE[start:], re.M)
    return REFERENCE[start : start + following.start()] if following else REFERENCE[start:]


def tables(text: str) -> list[list[str]]:
    """Return the first-column names of each table in `text`: `md.page_analysers` → md.page_analysers,
    `unit(slug)` → unit, `assets.make_early()`, `assets.finish()` → both."""
    found = []
    for block in re.split(r"\n\s*\n", text):
        rows = [row for row in block.strip().splitlines() if row.startswith("| ")][1:]  # no header
        if rows:
            cells = [row.split(" | ")[0].removeprefix("| ") for row in rows]
            found.append([name for cell in cells for name in re.findall(r"`([A-Za-z_.][A-Za-z0-9_.]*)[(`]", cell)])
    return found


def members(names: list[str], prefix: str) -> set[str]:
    return {name.removeprefix(prefix) for name in names if name.startswith(prefix)}


def public(cls) -> set[str]:
    """Return the public methods, properties and fields of a class."""
    names = {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}
    if dataclasses.is_dataclass(cls):
        names |= {f.name for f in dataclasses.fields(cls)}
    return names - {"__init__"}


EXTENSIONS = extensions.built_in_extensions()


def test_every_event_is_documented_in_the_order_declared_and_no_other():
    (events,) = tables(section("## Events"))
    assert events == list(extensions.HOOKS) == [event.name for event in extensions.EVENTS]
    for event in extensions.EVENTS:  # each documented signature and moment is the declaration's
        documented = re.search(rf"^\| `{event.name}\(([^)]*)\)` \| ([^|]*) \|", REFERENCE, re.M)
        assert documented, event.name
        assert documented.group(1) == ", ".join(event.arguments)
        assert documented.group(2) == event.when


def test_the_protocol_class_and_the_dispatcher_take_each_event_s_declared_arguments():
    for event in extensions.EVENTS:
        method = inspect.signature(getattr(extensions.Extension, event.name))
        assert tuple(method.parameters)[1:] == event.arguments, event.name
        dispatched = getattr(extensions.Extensions, event.name, None)
        if dispatched is not None:  # `analyse` is installed into the parser instead (Extensions.analysers)
            assert tuple(inspect.signature(dispatched).parameters)[1:] == event.arguments, event.name
    assert set(extensions.HOOKS) - {"analyse"} <= set(dir(extensions.Extensions))


def test_every_attribute_coursegen_adds_to_the_parser_is_documented_and_no_other():
    attributes, helpers = tables(section("## `md`, the parser"))
    own = set(CourseParser.__annotations__) | {"renderer"}
    assert members(attributes, "md.") == own
    md = make_markdown(EXTENSIONS.all)  # the built-in features install the lazily made ones
    assert all(hasattr(md, name) for name in own)
    assert set(CourseRenderer.__annotations__) == {"fence_handlers"} and "md.renderer.fence_handlers" in REFERENCE
    for name in ("md.core.ruler", "md.block.ruler", "md.inline.ruler", "md.add_render_rule", "md.use"):
        assert f"`{name}`" in REFERENCE and eval(name, {"md": md}) is not None
    modules = {"parse": parse, "roles": roles}
    for helper in helpers:
        module, _, function = helper.partition(".")
        documented = re.search(rf"`{re.escape(helper)}\(([^)]*)\)`", REFERENCE).group(1)
        assert documented == ", ".join(inspect.signature(getattr(modules[module], function)).parameters), helper
    registering = {name for name in dir(parse) + dir(roles) if name.startswith("register_")}
    assert {h.partition(".")[2] for h in helpers} >= registering


def test_every_env_key_a_rule_sees_is_documented_and_no_other(mini_course):
    """A recording extension reads `env` in a real rule of a real build."""
    import json

    (mini_course / "recorder.py").write_text(
        "import json\nfrom pathlib import Path\n\n\ndef install(md):\n    def record(state):\n"
        "        seen = {'env': sorted(state.env), 'ctx': type(state.env['ctx']).__name__}\n"
        "        Path(__file__).with_name('seen.json').write_text(json.dumps(seen))\n"
        "    md.core.ruler.push('record', record)\n"
    )
    config = mini_course / "course.yaml"
    config.write_text(config.read_text() + "extensions: [recorder.py]\n")
    build_site(mini_course)
    seen = json.loads((mini_course / "seen.json").read_text())
    env_keys, ctx_fields = tables(section("## `env`, in a rule"))
    assert sorted(env_keys) == seen["env"]
    assert seen["ctx"] == "ParseContext"
    assert ctx_fields == [f.name for f in dataclasses.fields(ParseContext)]


def test_every_built_in_analysis_is_documented_and_no_other():
    (analyses,) = tables(section("## `page.derived`, a page's analyses"))
    assert analyses == list(make_markdown(EXTENSIONS.all).page_analysers)


def test_every_field_of_course_unit_and_page_is_documented_and_no_other():
    course, unit, page = tables(section("## `course`, `unit` and `page`"))
    assert set(course) == public(Course)
    assert set(unit) == public(Unit)
    assert set(page) == public(Page)


def test_every_member_of_assets_and_problems_is_documented_and_no_other():
    assets, problems = tables(section("## `assets` and `problems`"))
    assert members(assets, "assets.") == public(Assets) | set(vars(Assets()))
    assert members(problems, "problems.") == public(Problems)
    add = re.search(r"`assets\.add\(([^)]*)\)`", REFERENCE).group(1)
    assert add == 'name, data, folder="assets"' and list(inspect.signature(Assets.add).parameters)[1:] == [
        "name",
        "data",
        "folder",
    ]
