"""The search index: small files that a query fetches a few of, made from every page's text.

Layout under search/ (search-index.js reads it):

- `index.json`: the only file fetched on every first search, and the only one whose name stays the
  same from build to build. It lists the fragment files with how many pages each holds, in course
  order (so a page's number tells its file), and, for each term prefix (a term's first PREFIX
  characters), the file holding the terms that start with it.
- `t/<prefix in hex>.<digest>.json`: `{term: postings}` for the terms starting with that prefix,
  where postings are flat `[page, weight, page gap, weight, …]`: a page's number as the gap from
  the one before (small numbers, which compress well) and a whole-number weight for ranking.
  A shard also lists, under the key "" (no term is empty), the terms of other shards that are one
  edit away from terms of its own in their first letters (`near_keys`), so that a query word mistyped
  there still finds its term by fetching the shards its own near keys name (search-index.js).
- `p/<digest>.json`: a fragment: a list of consecutive pages, each `{url, title, label, sections}`
  with sections as `[anchor, title, text]`, fetched only for the first results' pages (the browser
  ranks their sections and quotes them). Pages share a file up to FRAGMENT_SIZE bytes: each file
  costs a build more than its bytes do (creating 2,000 small files takes 0.3 s on this machine's
  disk), and a first query fetches at most a few of them.

Every file but index.json is named by a digest of its content, so a browser or the service worker
may keep it forever. Postings are per page, not per section: a section's words are in its page's
fragment, and a page lists each of its terms once, where a list per section would hold some ten
times as many entries for Python to make (docs/hosting.md#search).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

from coursegen.features.search.sections import TITLE_WEIGHT, PageText, terms

FOLDER = "search"
ENTRY = f"{FOLDER}/index.json"
PREFIX = 2  # characters of a term that name its file: a query word of two letters finds its completions
LONGEST = 40  # characters: longer runs are hashes or data, not words anyone types
# BM25's term-frequency part, scaled to whole numbers: a weight of SCALE is one match on a page of
# AVERAGE words. BM25 compares a page's length with the average; a fixed one keeps each weight a
# matter of its own page, so an edit changes only the files of the edited page's terms.
K1, B = 1.2, 0.75
AVERAGE = 1000
SCALE = 20
NEAREST = 5  # letters of the shortest term a mistyped query word may find (shorter words have too many neighbours)
FRAGMENT_SIZE = 32 * 1024  # bytes of JSON: some 10 KB over the network from a host that compresses


def search_files(pages: list[tuple[str, str, str, PageText]]) -> dict[str, bytes]:
    """Return the index files, keyed by site path, for `pages`: (url, title, label, text) each, in
    course order. The page's title counts as a heading."""
    files: dict[str, bytes] = {}
    fragments: list[list] = []  # [name, number of pages]
    held: list[bytes] = []  # the pages of the fragment being filled, as JSON

    def close_fragment() -> None:
        data = b"[" + b",".join(held) + b"]"
        name = f"p/{digest(data)}.json"
        files[f"{FOLDER}/{name}"] = data
        fragments.append([name, len(held)])
        held.clear()

    postings: dict[str, list[int]] = defaultdict(list)
    last: dict[str, int] = {}
    for number, (url, title, label, text) in enumerate(pages):
        page = b"".join(
            (b'{"url":', dump(url), b',"title":', dump(title), b',"label":', dump(label), b',"sections":')
        ) + (text.sections.encode() + b"}")
        if held and sum(map(len, held)) + len(page) > FRAGMENT_SIZE:
            close_fragment()
        held.append(page)
        counts = dict(text.counts)
        for term in terms(title):
            counts[term] = counts.get(term, 0) + TITLE_WEIGHT
        norm = K1 * (1 - B + B * sum(counts.values()) / AVERAGE)
        for term, count in counts.items():
            if len(term) <= LONGEST:
                postings[term] += (number - last.get(term, 0), round(SCALE * count * (K1 + 1) / (count + norm)) or 1)
                last[term] = number
    if held:
        close_fragment()
    shards: dict[str, dict[str, list[int]]] = defaultdict(dict)
    near: dict[str, list[str]] = defaultdict(list)
    for term in sorted(postings):
        shards[term[:PREFIX]][term] = postings[term]
        for key in near_keys(term):
            near[key].append(term)
    for key, listed in sorted(near.items()):
        shards[key][""] = listed  # type: ignore[assignment]
    prefixes = {}
    for prefix, shard in sorted(shards.items()):
        data = dump(shard)
        name = f"t/{prefix.encode().hex()}.{digest(data)}.json"
        files[f"{FOLDER}/{name}"] = data
        prefixes[prefix] = name
    files[ENTRY] = dump({"version": 1, "prefix": PREFIX, "fragments": fragments, "terms": prefixes})
    return dict(sorted(files.items()))


def near_keys(term: str) -> list[str]:
    """Return the shards, other than its own, where a query word one edit away from `term` in its
    first PREFIX letters looks for it: the term's prefix without its first letter, and without
    its second. A word with a letter missing, changed or swapped there has one of these (or its
    own term's) as a prefix of the same deletions of its own (search-index.js fetches those)."""
    if len(term) < NEAREST or not term.isalpha():  # numbers are not mistyped words
        return []
    return sorted({term[1 : PREFIX + 1], term[0] + term[2 : PREFIX + 1]} - {term[:PREFIX]})


def dump(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]
