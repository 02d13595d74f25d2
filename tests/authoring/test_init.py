"""`coursegen init`: a new course of any subject, its own Python package (any name, or none), `new` in it."""

from __future__ import annotations

import shutil

import pytest
from helpers import read_yaml, run_cli

from coursegen import __version__
from coursegen.pipeline import build_site


@pytest.fixture
def new_course(tmp_path, capsys):
    folder = tmp_path / "tides"
    status, out, err = run_cli(capsys, "init", folder, "--title", "Tides: a first course")
    assert status == 0, err
    assert out.strip() == f"created a course in {folder}; next: cd {folder} && coursegen serve"
    return folder


def test_init_writes_a_course_that_builds_and_passes_check_strict(new_course, capsys):
    files = sorted(p.relative_to(new_course).as_posix() for p in new_course.rglob("*") if p.is_file())
    assert files == [
        ".github/workflows/pages.yml",
        ".gitignore",
        "course.yaml",
        "kernels/__init__.py",
        "kernels/growth.py",
        "lessons/01-welcome.md",
        "requirements.txt",
        "reviews/02-practice.md",
        "widgets/growth-steps/result.html",
        "widgets/growth-steps/spec.yaml",
        "widgets/growth-steps/style.css",
        "widgets/growth-steps/view.js",
        "widgets/growth-steps/widget.py",
    ]
    assert read_yaml((new_course / "course.yaml").read_text())["title"] == "Tides: a first course"
    status, _, err = run_cli(capsys, "--root", new_course, "check", "--strict")
    assert status == 0 and err == "", err
    status, _out, err = run_cli(capsys, "--root", new_course, "build", "--strict")
    assert status == 0, err
    page = (new_course / "site" / "welcome.html").read_text()
    assert '<span class="calc" data-calc="growth.doubling_steps(5)">15</span>' in page
    assert 'data-widget="growth-steps"' in page and '<dd data-out="amount_text">162.89</dd>' in page
    assert (new_course / "site" / "practice.html").is_file()


def test_init_refuses_to_overwrite_a_course(new_course, capsys):
    lesson = new_course / "lessons" / "01-welcome.md"
    lesson.write_text("mine")
    status, _out, err = run_cli(capsys, "init", new_course)
    assert status == 1 and "a course already exists here" in err and "Traceback" not in err
    assert lesson.read_text() == "mine"


def test_init_refuses_a_folder_holding_a_file_it_would_write(tmp_path, capsys):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "01-welcome.md").write_text("mine")
    status, _, err = run_cli(capsys, "init", tmp_path)
    assert status == 1 and "init would overwrite 1 existing file(s): lessons/01-welcome.md" in err
    assert not (tmp_path / "course.yaml").exists()


def test_init_without_a_folder_uses_the_root_and_titles_the_course_from_its_name(tmp_path, capsys):
    folder = tmp_path / "ocean-waves"
    folder.mkdir()
    status, _out, err = run_cli(capsys, "--root", folder, "init")
    assert status == 0, err
    assert read_yaml((folder / "course.yaml").read_text())["title"] == "Ocean waves"


def test_version(capsys):
    status, out, _ = run_cli(capsys, "--version")
    assert status == 0 and out.strip() == f"coursegen {__version__}"


def test_requirements_pin_this_version_and_the_workflow_installs_from_them_with_pip_caching(new_course):
    pinned = [line for line in (new_course / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    assert pinned[0] == f"coursegen=={__version__}"
    flow = read_yaml((new_course / ".github" / "workflows" / "pages.yml").read_text())
    triggers = flow["on"]
    assert triggers["push"]["branches"] == ["main"] and "workflow_dispatch" in triggers
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = flow["jobs"]["build"], flow["jobs"]["deploy"]
    uses = [step.get("uses", "") for step in build["steps"]]
    runs = [step.get("run", "") for step in build["steps"]]
    assert uses[0].startswith("actions/checkout@") and uses[1].startswith("actions/setup-python@")
    assert build["steps"][1]["with"] == {
        "python-version": "3.12",
        "cache": "pip",
        "cache-dependency-path": "requirements.txt",
    }
    assert runs.index("coursegen build --strict") > runs.index("python -m pip install -r requirements.txt")
    upload = build["steps"][-1]
    assert upload["uses"].startswith("actions/upload-pages-artifact@") and upload["with"]["path"] == "site"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert deploy["environment"]["url"] == "${{ steps.deployment.outputs.page_url }}"
    assert [step["uses"].split("@")[0] for step in deploy["steps"]] == ["actions/deploy-pages"]
    assert (new_course / ".gitignore").read_text().splitlines()[:2] == ["site/", ".coursegen-cache/"]


def test_the_self_hosted_pyodide_steps_run_only_for_a_course_that_pinned_pyodide_with_npm(new_course):
    from coursegen.stages.config import PyodideConfig

    text = (new_course / ".github" / "workflows" / "pages.yml").read_text()
    steps = read_yaml(text)["jobs"]["build"]["steps"]
    node = next(step for step in steps if step.get("uses", "").startswith("actions/setup-node@"))
    npm = next(step for step in steps if step.get("run", "").startswith("npm ci"))
    for step in (node, npm):
        assert step["if"] == "hashFiles('package-lock.json') != ''"
    assert node["with"]["cache"] == "npm" and "--omit=dev" in npm["run"]
    assert steps.index(npm) < next(i for i, s in enumerate(steps) if s.get("run") == "coursegen build --strict")
    assert f"npm install pyodide@{PyodideConfig().version}" in text  # the pin the build checks the copy against


def test_new_lesson_and_review_work_in_a_course_with_no_units_yet(tmp_path, capsys):
    (tmp_path / "course.yaml").write_text("title: Knots\nunits:\n")
    assert run_cli(capsys, "--root", tmp_path, "new", "lesson", "The overhand knot")[0] == 0
    assert run_cli(capsys, "--root", tmp_path, "new", "review", "Knots so far")[0] == 0
    status, _out, err = run_cli(capsys, "--root", tmp_path, "check", "--strict")
    assert status == 0 and err == "", err
    assert read_yaml((tmp_path / "course.yaml").read_text())["units"] == [
        {"slug": "the-overhand-knot"},
        {"slug": "knots-so-far"},
    ]


def test_a_new_lesson_in_a_new_course_passes_check_strict(new_course, capsys):
    assert run_cli(capsys, "--root", new_course, "new", "lesson", "Spring tides")[0] == 0
    text = (new_course / "lessons" / "03-spring-tides.md").read_text()
    assert "overflow" not in text and "BF16" not in text and "kernels/" in text
    status, _, err = run_cli(capsys, "--root", new_course, "check", "--strict")
    assert status == 0 and err == "", err


def test_a_course_with_no_python_package_at_all(new_course, capsys):
    shutil.rmtree(new_course / "kernels")
    widget = new_course / "widgets" / "growth-steps" / "widget.py"
    widget.write_text(
        "import math\n\n\ndef run(rate, steps):\n"
        "    amount = 100 * (1 + rate / 100) ** steps\n"
        "    return {'amount_text': f'{amount:.2f}',\n"
        "            'doubling': math.ceil(math.log(2) / math.log1p(rate / 100))}\n"
    )
    lesson = new_course / "lessons" / "01-welcome.md"
    lesson.write_text(
        lesson.read_text().replace(
            "growth.doubling_steps(5) | = 15", "math.ceil(math.log(2) / math.log1p(0.05)) | = 15"
        )
    )
    status, _, err = run_cli(capsys, "--root", new_course, "build", "--strict")
    assert status == 0, err
    page = (new_course / "site" / "welcome.html").read_text()
    assert '<dd data-out="amount_text">162.89</dd>' in page and ">15</span>" in page
    assert "It calls the course's" not in page
    runtime = page.split("data-widget-runtime>", 1)[1].split("</script>", 1)[0]
    assert read_yaml(runtime)["wheel"] == "" and not any(
        p.parts[0] == "py" for p in (new_course / "site").rglob("*.whl")
    )


def test_a_widget_backed_by_a_package_of_another_name(new_course, capsys):
    (new_course / "kernels").rename(new_course / "tidal")
    (new_course / "tidal" / "moon.py").write_text(
        "PERIOD_HOURS = 12.42\n\n\ndef highs(days):\n    return int(days * 24 // PERIOD_HOURS)\n"
    )
    config = new_course / "course.yaml"
    config.write_text(config.read_text() + "python:\n  package: tidal\n")
    widget = new_course / "widgets" / "growth-steps"
    (widget / "widget.py").write_text(
        (widget / "widget.py").read_text().replace("from kernels import", "from tidal import")
    )
    (widget / "spec.yaml").write_text(
        (widget / "spec.yaml").read_text().replace("# packages: [numpy]", "packages: [numpy]")
    )
    lesson = new_course / "lessons" / "01-welcome.md"
    lesson.write_text(lesson.read_text() + "\nIn ten days: {calc}`moon.highs(10) | = 19` high tides.\n")
    outputs = build_site(new_course).outputs
    page = outputs["welcome.html"].decode()
    assert '<span class="calc" data-calc="moon.highs(10)">19</span>' in page
    assert '<dd data-out="amount_text">162.89</dd>' in page and "the course's <code>tidal</code> package" in page
    runtime = read_yaml(page.split("data-widget-runtime>", 1)[1].split("</script>", 1)[0])
    assert runtime["module"] == "tidal" and runtime["packages"] == ["numpy"]
    assert runtime["wheel"].endswith("/tidal-0.1.0-py3-none-any.whl") and runtime["wheel"] in outputs


def test_a_widget_spec_lists_pyodide_package_names(new_course):
    spec = new_course / "widgets" / "growth-steps" / "spec.yaml"
    spec.write_text(spec.read_text().replace("# packages: [numpy]", "packages: [numpy, 3]"))
    from coursegen.errors import ContentError

    with pytest.raises(ContentError, match="'packages' must list Pyodide package names"):
        build_site(new_course)


def test_a_package_name_that_python_cannot_import_is_an_error_at_its_line(new_course, capsys):
    config = new_course / "course.yaml"
    config.write_text(config.read_text() + "python:\n  package: my-kernels\n")
    line = config.read_text().splitlines().index("  package: my-kernels") + 1
    status, _, err = run_cli(capsys, "--root", new_course, "check")
    assert status == 1 and err.startswith(
        f"course.yaml:{line}: python package must be a Python name such as 'kernels', found 'my-kernels'"
    ), err


def test_init_gives_each_new_course_its_own_id_which_its_pages_carry(new_course, tmp_path, capsys):
    from coursegen.stages.config import COURSE_ID

    course_id = read_yaml((new_course / "course.yaml").read_text())["id"]
    assert COURSE_ID.match(course_id)
    status, _, err = run_cli(capsys, "init", tmp_path / "other", "--title", "Tides: a first course")
    assert status == 0, err
    assert read_yaml((tmp_path / "other" / "course.yaml").read_text())["id"] != course_id  # same title, not the same
    status, _, err = run_cli(capsys, "--root", new_course, "build")
    assert status == 0, err
    page = (new_course / "site" / "practice.html").read_text()
    assert f'"id": "{course_id}"' in page


def test_requirements_pin_what_coursegen_and_the_course_import_at_the_versions_installed(new_course):
    """Not coursegen alone, whose own requirements are ranges: numpy (which the course's Python imports)
    and every package the build needs are pinned at the versions installed with this coursegen."""
    from importlib import metadata

    lines = [line for line in (new_course / "requirements.txt").read_text().splitlines() if not line.startswith("#")]
    pins = dict(line.split("==") for line in lines)
    assert len(pins) == len(lines)  # every line pinned
    for name in ("numpy", "Jinja2", "MarkupSafe", "markdown-it-py", "mdurl", "ruamel.yaml", "selectolax"):
        assert pins[name] == metadata.version(name), name
    assert "pytest" not in pins and "ml_dtypes" not in pins  # extras are not what a build needs
