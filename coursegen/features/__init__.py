"""Features beyond plain Markdown, each an extension of the one protocol (coursegen.extensions).

`built_in` is the one list of them. The build reaches it only through coursegen.extensions, which
calls each event on every extension; no stage imports a feature.
"""

from __future__ import annotations


def _listed() -> tuple:
    """Return every built-in extension, in order (made afresh each time: the same modules give equal
    extensions, so the parser kept for them is still theirs)."""
    # Imported here, not at the top: the author-code worker imports single feature modules (calc's
    # functions) and must not import every feature, and the features import the stages.
    from coursegen.extensions import ModuleExtension
    from coursegen.features import anchors, appearance, callouts
    from coursegen.features.calc import extension as calc
    from coursegen.features.cells import extension as cells
    from coursegen.features.citations import extension as citations
    from coursegen.features.figrefs import extension as figrefs
    from coursegen.features.hosting import offline, robots
    from coursegen.features.math import extension as math
    from coursegen.features.myst import extension as myst
    from coursegen.features.questions import extension as questions
    from coursegen.features.search import extension as search
    from coursegen.features.widgets import extension as widgets
    from coursegen.theme import messages

    return tuple(
        ModuleExtension(module, name)
        for module, name in (
            (messages, "messages"),  # the catalogue, for what parse rules write (theme/messages.py)
            (callouts, "callouts"),
            (myst, "myst"),  # MyST's and MkDocs' syntax: directives, include, what is not read
            (calc, "calc"),
            (cells, "cells"),
            (math, "math"),  # after calc: its rule runs before the roles, which calc's install set up
            (figrefs, "figrefs"),  # numbered figures and tables, {numref} and {ref}
            (citations, "citations"),  # its References rule runs after the roles
            (anchors, "anchors"),
            (questions, "questions"),
            (search, "search"),
            (robots, "robots"),
            (appearance, "appearance"),
            (widgets, "widgets"),
            (offline, "offline"),  # last: it precaches every other extension's files
        )
    )


LAST = ("offline",)  # after the course's own extensions too


def built_in(config) -> tuple[tuple, tuple]:
    """Return the built-in extensions as (those before the course's own, those after), with course.yaml's
    extra callouts (`config.callouts`) after the others of the first group."""
    from coursegen.features.callouts import ExtraCallouts

    listed = _listed()
    extra = (ExtraCallouts(config.callouts),) if config is not None and config.callouts else ()
    early = tuple(ext for ext in listed if ext.name not in LAST)
    return (*early, *extra), tuple(ext for ext in listed if ext.name in LAST)
