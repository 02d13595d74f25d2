"""What a course's own Python may import that coursegen does not install, and how to get it.

coursegen depends only on what every course needs (numpy among it). A module the course's package or
a widget imports beyond that is the course's to install, and its published build's too: init's
requirements.txt is where it is listed. Some such modules come with an extra of coursegen
(`pip install "coursegen[bfloat16]"`), named in pyproject.toml's optional-dependencies.
"""

from __future__ import annotations

from coursegen import __version__

EXTRAS = {
    "ml_dtypes": "bfloat16",
    "matplotlib": "plots",
}  # module a course imports → the coursegen extra that installs it


def missing_module_hint(err: BaseException) -> str:
    """Return how to install the module whose import failed with `err`, or '' when `err` is no such failure."""
    if not isinstance(err, ModuleNotFoundError) or not err.name:
        return ""
    module = err.name.split(".")[0]
    extra = EXTRAS.get(module)
    if extra:
        return (
            f'{module} comes with coursegen\'s {extra} extra: pip install "coursegen[{extra}]"; '
            f"in requirements.txt write coursegen[{extra}]=={__version__}"
        )
    return (
        f"install the package that provides '{module}' (pip install …), and list it, pinned, in the "
        "course's requirements.txt so the published build has it too"
    )
