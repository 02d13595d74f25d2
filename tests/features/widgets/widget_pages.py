"""Reading what the build put in a widget page: baked states and runtime settings."""

from __future__ import annotations

import json
import re


def figure_states(html: str, name: str) -> list[tuple[dict, dict]]:
    """Return [(params, result)] baked into the page for the first figure of widget `name`."""
    figure = html[html.index(f'data-widget="{name}"') :]
    data = json.loads(
        re.search(r"<script type=\"application/json\" data-widget-states>(.*?)</script>", figure, re.S).group(1)
    )
    count = len(next(iter(data["params"].values())))
    return [
        (
            {name: column[i] for name, column in data["params"].items()},
            {**data["const"], **{key: column[i] for key, column in data["outputs"].items()}},
        )
        for i in range(count)
    ]


def runtime_settings(html: str) -> dict:
    """Return the page's widget runtime settings (worker, Pyodide base URL, SRI, kernels wheel)."""
    return json.loads(re.search(r"data-widget-runtime>(.*?)</script>", html, re.S).group(1))
