"""What GitHub Pages publishes: the site's files, without the output folder's marker.

`.coursegen-site` must stay in site/ (the next build reads it to know the folder holds only what it
wrote), so both Pages workflows leave it out of the upload: actions/upload-pages-artifact from v5.0.0
leaves out hidden files unless `include-hidden-files` is true. GitHub's action cannot run here; its
archive step is run instead, with the arguments that release passes to tar.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from helpers import REPO, read_yaml, run_cli

from coursegen.pipeline import build_site
from coursegen.stages.write import MARKER

FIRST_WITHOUT_HIDDEN_FILES = (5, 0, 0)  # the first release with include-hidden-files (false by default)
# The v5.0.0 archive step on Linux, `include-hidden-files` false (action.yml of actions/upload-pages-artifact).
ARCHIVE = ["--dereference", "--hard-dereference", "--exclude=.git", "--exclude=.github", "--exclude=.[^/]*"]


def upload_step(workflow_text: str) -> dict:
    steps = read_yaml(workflow_text)["jobs"]["build"]["steps"]
    return next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact@"))


def workflows(tmp_path, capsys) -> dict[str, str]:
    assert run_cli(capsys, "init", tmp_path / "new", "--title", "New")[0] == 0
    return {
        "the workflow init writes": (tmp_path / "new" / ".github" / "workflows" / "pages.yml").read_text(),
        "this repository's workflow": (REPO / ".github" / "workflows" / "pages.yml").read_text(),
    }


def test_both_workflows_upload_the_site_without_hidden_files(tmp_path, capsys):
    for name, text in workflows(tmp_path, capsys).items():
        step = upload_step(text)
        version = re.fullmatch(r"actions/upload-pages-artifact@v(\d+)\.(\d+)\.(\d+)", step["uses"])
        assert version, f"{name}: {step['uses']} is not pinned to a release"
        assert tuple(map(int, version.groups())) >= FIRST_WITHOUT_HIDDEN_FILES, f"{name} uploads hidden files"
        assert step["with"]["path"] == "site" and step["with"].get("include-hidden-files") is False, name
        assert MARKER in text, f"{name} does not say why the marker stays out of the upload"


@pytest.mark.skipif(not shutil.which("tar"), reason="needs GNU tar, as the action's runner has")
def test_the_uploaded_archive_holds_every_file_of_the_site_but_the_marker(mini_course, tmp_path, capsys):
    site = tmp_path / "site"
    assert run_cli(capsys, "--root", mini_course, "build", "--out", site)[0] == 0
    assert (site / MARKER).is_file()
    archive = tmp_path / "artifact.tar"
    subprocess.run(["tar", *ARCHIVE, "--directory", site, "-cf", archive, "."], check=True)
    listing = subprocess.run(["tar", "-tf", archive], check=True, capture_output=True, text=True).stdout
    uploaded = {name.removeprefix("./") for name in listing.splitlines() if not name.endswith("/")}
    outputs = set(build_site(mini_course).outputs)
    assert MARKER not in uploaded
    # .nojekyll is for a site published from a branch: a site deployed by Actions is never run through Jekyll.
    assert uploaded == outputs - {".nojekyll"}


def test_no_file_of_the_site_names_the_marker(mini_course):
    """The service worker's list of files, the sitemap and the search index hold only the site's own files."""
    outputs = build_site(mini_course).outputs
    assert MARKER not in outputs
    assert not [path for path, data in outputs.items() if MARKER.encode() in data]
