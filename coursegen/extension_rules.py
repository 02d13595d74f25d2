"""What a course's extension may give the build, checked: the rules course.yaml is held to, and the
names the engine and the built-in extensions own (docs/extensions.md, "What a course extension may give").

The dispatcher (coursegen.extensions) calls these on a course extension's answers: its name in
course.yaml, its `configure`, `csp` and `page_context` answers, the files its `add_files` adds, and
what its `install` added to the parser, which runs under its time limit (CourseExtension.timed).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from coursegen.errors import ContentError, Problem, Problems, choices_hint
from coursegen.stages.config import CONFIG_NAME

if TYPE_CHECKING:  # extensions.py imports this module
    from coursegen.extensions import CourseExtension, Extension

# The engine's own page analyses (stages/parse.make_markdown), kept as page.derived[name] beside each
# extension's `analyse` under the extension's name: no extension may take one of these names.
ENGINE_ANALYSES = ("ids", "resources", "sha256")


class TimedOut(Exception):
    """Code a course extension added to the parser ran past its time limit: `problem` says where."""

    def __init__(self, problem: Problem):
        super().__init__(problem.message)
        self.problem = problem


def _rulers(md) -> tuple:
    return (md.core.ruler, md.block.ruler, md.inline.ruler, md.inline.ruler2)


def installed(md) -> dict:
    """Return what the parser `md` calls, by kind and name: its rules, render rules, roles, fences,
    container rules and page analysers (compared after an extension's install: guard_installed)."""
    return {
        "rules": {(i, rule.name): rule.fn for i, ruler in enumerate(_rulers(md)) for rule in ruler.__rules__},
        "render": dict(md.renderer.rules),
        "roles": dict(getattr(md, "role_handlers", {})),
        "fences": dict(getattr(md.renderer, "fence_handlers", {})),
        "containers": list(getattr(md, "container_rules", [])),
        "analysers": dict(getattr(md, "page_analysers", {})),
    }


def guard_installed(md, before: dict, ext: CourseExtension) -> None:
    """Run what a course's extension added to `md` under its time limit (CourseExtension.timed), and
    refuse a role or fence it replaced: the built-in {calc} would silently compute something else."""
    replaced = [
        hook_problem(
            ext,
            "install",
            f"replaces the {kind[:-1]} '{shown.format(name)}' another extension gives",
            f"register the {kind[:-1]} under a name of its own",
        )
        for kind, table, shown in (
            ("roles", md.__dict__.get("role_handlers", {}), "{{{}}}"),
            ("fences", getattr(md.renderer, "fence_handlers", {}), "{}"),
        )
        for name, handler in table.items()
        if name in before[kind] and before[kind][name] is not handler
    ]
    if replaced:
        raise ContentError(replaced)
    for i, ruler in enumerate(_rulers(md)):
        new = [rule for rule in ruler.__rules__ if before["rules"].get((i, rule.name)) is not rule.fn]
        for rule in new:
            rule.fn = ext.timed(rule.fn, f"rule '{rule.name}'")
        if new:
            ruler.__cache__ = None  # markdown-it compiles its chains of functions again
    for kind, table, what in (
        ("render", md.renderer.rules, "render rule '{}'"),
        ("roles", getattr(md, "role_handlers", {}), "role '{{{}}}'"),
        ("fences", getattr(md.renderer, "fence_handlers", {}), "fence '{}'"),
        ("analysers", getattr(md, "page_analysers", {}), "page analyser '{}'"),
    ):
        for name, function in list(table.items()):
            if before[kind].get(name) is not function:
                table[name] = ext.timed(function, what.format(name))
    containers = getattr(md, "container_rules", [])
    containers[len(before["containers"]) :] = [
        ext.timed(rule, "block rule") for rule in containers[len(before["containers"]) :]
    ]


def clashing_name(entry: str, line: int, listed: dict[str, int], taken: Collection[str], problems: Problems) -> bool:
    """Report an entry listed twice, or whose name (a file's stem, a module's last name) another extension
    or an engine analysis has; note it in `listed` otherwise. Return whether it was reported."""
    name = _name_of(entry)
    if entry in listed:
        message, hint = f"extension '{entry}' is listed twice", f"first listed at line {listed[entry]}; list it once"
    elif name in taken or name in ENGINE_ANALYSES:
        whose = "a built-in extension" if name in taken else "one of the engine's page analyses"
        message = f"extension '{entry}' is named '{name}', as {whose} is"
        hint = "rename its file or module: an extension's name keys its prepare data and page analysis"
    elif name in {_name_of(e) for e in listed}:
        other = next(e for e in listed if _name_of(e) == name)
        message = f"extension '{entry}' is named '{name}', as '{other}' (line {listed[other]}) is"
        hint = "rename one of them: an extension's name keys its prepare data and page analysis"
    else:
        listed[entry] = line
        return False
    problems.error(CONFIG_NAME, line, message, hint)
    return True


def _name_of(entry: str) -> str:
    return Path(entry).stem if entry.endswith(".py") else entry.rsplit(".", 1)[-1]


def hook_problem(ext: Extension, hook: str, what: str, hint: str = "") -> Problem:
    """Return a problem with what a course extension's `hook` gave: at the line its function starts."""
    function = getattr(getattr(ext, "module", None), hook, None)
    code = getattr(function, "__code__", None)
    root = getattr(ext, "root", Path("."))
    path, line = (shown(root, Path(code.co_filename)), code.co_firstlineno) if code else (CONFIG_NAME, 1)
    said = what if what.startswith(":") else " " + what
    return Problem(path, line, 0, f"extension '{ext.name}' {hook}(){said}", hint)


def a_type(value) -> str:
    """Return 'a list', 'an int': the type of `value` as a sentence names it."""
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def checked_csp(ext: Extension, answer, problems: Problems) -> dict:
    """Return the sources a course extension's csp() gave that course.yaml's `csp:` would accept,
    reporting the rest at the extension."""
    from coursegen.stages.config import CSP_DIRECTIVES, csp_problem

    if answer is None:
        return {}
    if not isinstance(answer, dict):
        problems.items.append(hook_problem(ext, "csp", f"returned {a_type(answer)}, not {{directive: [sources]}}"))
        return {}
    good = {}
    for directive, sources in answer.items():
        if directive not in CSP_DIRECTIVES:
            hint = choices_hint(str(directive), CSP_DIRECTIVES, "directives")
            problems.items.append(hook_problem(ext, "csp", f"gives the unknown CSP directive {directive!r}", hint))
        elif not isinstance(sources, (list, tuple)):
            problems.items.append(
                hook_problem(ext, "csp", f"gives {directive} {a_type(sources)}, not a list of sources")
            )
        elif found := csp_problem(directive, list(sources)):
            problems.items.append(hook_problem(ext, "csp", f": {found[0]}", found[1]))
        else:
            good[directive] = list(sources)
    return good


def checked_context(ext: Extension, values, reserved: frozenset[str], problems: Problems) -> dict:
    """Return the template values a course extension's page_context() gave, reporting an answer that is
    no mapping of names and a name that is the engine's (`reserved`)."""
    if not isinstance(values, dict) or not all(isinstance(k, str) for k in values):
        problems.items.append(hook_problem(ext, "page_context", f"returned {a_type(values)}, not {{name: value}}"))
        return {}
    clash = sorted(set(values) & reserved)
    if clash:
        listed = ", ".join(repr(name) for name in clash)
        problems.items.append(
            hook_problem(
                ext,
                "page_context",
                f"gives {listed}, which the engine gives every page",
                "choose names of the extension's own, such as "
                f"'{ext.name}_{clash[0]}'; the engine's are: {', '.join(sorted(reserved))}",
            )
        )
        return {k: v for k, v in values.items() if k not in reserved}
    return values


def shown(root: Path, file: Path) -> str:
    """Return a file's path relative to the course, or as it is when it is outside."""
    try:
        return file.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return file.as_posix()
