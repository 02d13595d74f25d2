"""`coursegen init` given what it cannot use: a message naming the place, exit status 1, no traceback,
nothing written outside the folder, and no half-made course left behind."""

from __future__ import annotations

import pytest
from helpers import read_yaml, run_cli


def files_under(folder) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def path_of_length(base, length: int):
    """Return a path below `base` whose name is `length` characters long, in components of at most 200."""
    extra = length - len(str(base))
    count = -(-extra // 201)
    size, longer = divmod(extra, count)
    return base.joinpath(*("d" * (size + (i < longer) - 1) for i in range(count)))


def refused(capsys, *args) -> str:
    """Run init; assert it refused cleanly; return its message."""
    status, out, err = run_cli(capsys, "init", *args)
    assert status == 1 and out == "" and "Traceback" not in err, (status, out, err)
    return err


def test_init_never_writes_through_a_link_to_a_folder_outside(tmp_path, capsys):
    course, outside = tmp_path / "course", tmp_path / "outside"
    course.mkdir()
    outside.mkdir()
    (course / "lessons").symlink_to(outside)
    err = refused(capsys, course)
    assert err == (
        f"{course}/lessons: 'lessons' is a symbolic link to {outside}, outside the new course\n"
        "    hint: init writes only inside its folder: remove the link, or run init in an empty folder\n"
    )
    assert files_under(outside) == [] and files_under(course) == ["lessons"]


def test_init_never_writes_through_a_dangling_link_either(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "course.yaml").symlink_to(tmp_path / "elsewhere.yaml")  # points at nothing yet
    err = refused(capsys, course)
    assert "'course.yaml' is a symbolic link to " in err and "outside the new course" in err
    assert not (tmp_path / "elsewhere.yaml").exists()


def test_a_link_that_stays_inside_the_folder_is_written_through(tmp_path, capsys):
    course = tmp_path / "course"
    (course / "texts").mkdir(parents=True)
    (course / "lessons").symlink_to("texts")
    assert run_cli(capsys, "init", course)[0] == 0
    assert (course / "texts" / "01-welcome.md").is_file()


def test_init_into_a_file_says_so(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("mine")
    err = refused(capsys, notes)
    assert err.startswith(f"{notes}: '{notes}' is a file; init makes a course in a folder\n")
    assert notes.read_text() == "mine"


def test_a_file_named_like_a_folder_init_makes_stops_it_before_it_writes_anything(tmp_path, capsys):
    course = tmp_path / "course"
    course.mkdir()
    (course / "widgets").write_text("mine")
    err = refused(capsys, course)
    assert err == (
        f"{course}/widgets: 'widgets' is a file, but init makes a folder of that name\n"
        "    hint: rename or remove the file, or give a new folder: coursegen init my-course\n"
    )
    assert files_under(course) == ["widgets"]  # course.yaml, .gitignore, … (written before widgets/) are not there


def test_a_write_that_fails_half_way_leaves_nothing_behind(tmp_path, capsys):
    """A path the system cannot open (longer than PATH_MAX, 4096 bytes) fails at the starter's deepest file,
    widgets/growth-steps/result.html, after every other file was written: all of them go again."""
    course = path_of_length(tmp_path, 4096 - len("/widgets/growth-steps/result.html"))
    assert len(str(course / "widgets/growth-steps/result.html")) == 4096  # one byte more than open() takes
    assert len(str(course / ".github/workflows/pages.yml")) < 4096
    err = refused(capsys, course)
    assert err.startswith(f"{course}/widgets/growth-steps/result.html: cannot write the new course: File name too long")
    assert "hint: nothing was left behind" in err
    assert files_under(tmp_path) == []  # nor the folders init made on the way to it


def test_a_title_is_one_line_and_its_markup_is_shown_as_typed(tmp_path, capsys):
    course = tmp_path / "course"
    title = 'Tides\n<script>alert("x")</script> *and* `waves` [link](https://example.org) $x$ & {calc}'
    status, _, err = run_cli(capsys, "init", course, "--title", title)
    assert status == 0, err
    one_line = " ".join(title.split())
    assert read_yaml((course / "course.yaml").read_text())["title"] == one_line
    status, _, err = run_cli(capsys, "--root", course, "build", "--strict")
    assert status == 0, err
    page = (course / "site" / "welcome.html").read_text()
    shown = (
        "This is the first lesson of Tides &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; *and* `waves` "
        "[link](https://example.org) $x$ &amp; {calc}."
    )
    assert shown in page.replace("\n", " ")
    assert "<script>alert" not in page and "<em>and</em>" not in page
    assert "<title>Welcome · Lesson 1 · Tides &lt;script&gt;alert(&#34;x&#34;)" in page  # course.yaml's title, escaped


@pytest.mark.parametrize(
    "title, what",
    [("Bell\x07s", "the control character U+0007"), ("Caf\udce9", "a byte that is not UTF-8, read as U+DCE9")],
)
def test_a_title_with_a_character_that_is_not_text_is_refused(tmp_path, capsys, title, what):
    err = refused(capsys, tmp_path / "course", "--title", title)  # "\udce9": byte 0xe9 of a Latin-1 command line
    assert err.startswith(f"{tmp_path / 'course'}: the title holds {what}\n")
    assert not (tmp_path / "course").exists()
