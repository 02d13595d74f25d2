"""Author mistakes, collected rather than raised, so one build reports all of them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace


@dataclass(frozen=True, order=True)
class Problem:
    """One author-facing problem at a place in a source file."""

    path: str
    line: int
    col: int
    message: str
    hint: str = ""
    severity: str = "error"  # "error" or "warning"
    where: str = ""  # the place in a file whose lines are not the text's, e.g. a notebook's "cell 7, line 2"

    def format(self) -> str:
        """Return `path:line:col: message` (`name: message` for line 0, a setting outside the sources;
        `path: cell 7, line 2: message` in a notebook) with an indented hint line when there is one."""
        where = self.path if not self.line else f"{self.path}:{self.line}" + (f":{self.col}" if self.col else "")
        if self.where:
            where = f"{self.path}: {self.where}"
        label = "" if self.severity == "error" else "warning: "
        text = f"{where}: {label}{self.message}"
        return text + (f"\n    hint: {self.hint}" if self.hint else "")


class ContentError(Exception):
    """Raised at a stage boundary when the sources have errors; carries every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(problems)
        super().__init__("\n".join(p.format() for p in self.problems))


@dataclass
class Problems:
    """An append-only list of problems shared by the stages of one build."""

    items: list[Problem] = field(default_factory=list)

    def error(self, path: str, line: int, message: str, hint: str = "", col: int = 0, where: str = "") -> None:
        """Record an error."""
        self.items.append(Problem(str(path), line, col, message, hint, "error", where))

    def warning(self, path: str, line: int, message: str, hint: str = "", col: int = 0, where: str = "") -> None:
        """Record a warning (an error under --strict)."""
        self.items.append(Problem(str(path), line, col, message, hint, "warning", where))

    def errors(self, strict: bool = False) -> list[Problem]:
        """Return the problems that stop a build."""
        return sorted(p for p in self.items if strict or p.severity == "error")

    def raise_if_errors(self, strict: bool = False) -> None:
        """Raise ContentError with every problem if any of them stops the build."""
        if self.errors(strict):
            raise ContentError(self.items)


def placed(problems, places: Mapping[str, Callable[[int], str]]) -> list[Problem]:
    """Return `problems` with `where` filled in for each path in `places` (path → a function from a
    line of the text the build read to its place in the file: a notebook's cells, see stages.notebook).
    Problems are found in that text by every stage; they are placed once, when the build reports them."""
    return [
        replace(p, where=places[p.path](p.line)) if p.line and not p.where and p.path in places else p for p in problems
    ]


def did_you_mean(word: str, choices) -> str:
    """Return 'did you mean 'x'?' for the nearest choice, or '' when none is close."""
    import difflib  # here, not at the top: only a build with a mistake needs it

    near = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"did you mean '{near[0]}'?" if near else ""


def choices_hint(word: str, choices, noun: str) -> str:
    """Return a hint naming the nearest choice (if any) and listing all of them."""
    listed = ", ".join(sorted(str(c) for c in choices)) or "(none)"
    near = did_you_mean(word, choices)
    return (near + " " if near else "") + f"known {noun} are: {listed}"
