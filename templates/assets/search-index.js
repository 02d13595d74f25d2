// The course's search index, read a few files at a time (coursegen/features/search/index.py writes
// it and explains its layout): the entry file first, then for each query the files of the terms typed
// and the fragments of the first results' pages. Every file fetched is kept for the next query.

const WORD = /[\p{L}\p{N}]+/gu;  // as sections.py's WORD: letters and digits
// split() keeps the words at odd places, what lies between at even ones; a word's accents written
// as combining marks (NFD text) stay in it, and are folded away when it is compared
const SPLIT = /([\p{L}\p{N}][\p{L}\p{N}\p{Mn}]*)/u;
const MARKS = /\p{Mn}/gu;
const ASCII = /^[\x00-\x7f]*$/;
const LONGEST = 40;  // characters: index.py leaves longer runs out of the index
const TITLE_WEIGHT = 3;  // as sections.py's: a word in a heading counts three times
const COMPLETIONS = 64;  // a word's completions scored at most (the shortest): "a" or "co" stays fast
const SHORTER = 2;  // letters a word the index lacks may lose from its end ("gates" finds "gate")
const SHORTEST = 4;  // letters such a shortened word keeps at least
const NEAREST = 5;  // letters a query word needs before a term one edit away may stand for it (index.py's)
const EXCERPT = 24;  // words quoted from a section
const BEFORE = 6;  // of them, before the first match

/** Return the index terms of `text`, as sections.py cuts them. */
export function terms(text) {
  return (folded(text).match(WORD) ?? []).filter((word) => word.length <= LONGEST);
}

/** Return `text` lower-case, in compatibility decomposition without non-spacing marks, as
 * sections.py's folded(): "Método", "me\u0301todo" and "metodo" all become "metodo". */
export function folded(text) {
  if (ASCII.test(text)) return text.toLowerCase();  // most text: nothing to decompose
  return text.toLowerCase().normalize("NFKD").replace(MARKS, "").toLowerCase();
}

/** Return whether `a` becomes `b` by at most one edit: a letter added, dropped, changed, or two
 * neighbours swapped (the Damerau distance is 0 or 1). */
export function oneEditApart(a, b) {
  if (a.length > b.length) [a, b] = [b, a];
  if (b.length - a.length > 1) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (i === a.length) return true;  // equal, or b has one letter more at its end
  if (a.length < b.length) return a.slice(i) === b.slice(i + 1);
  return a.slice(i + 1) === b.slice(i + 1)
    || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));
}

/** Return the shards where a term one edit away from `word` may be filed or listed as near: the
 * word's own prefix, and its prefixes without its first letter and without its second (index.py's
 * near_keys explains why these suffice). */
export function nearShards(word, prefix) {
  return [...new Set([word.slice(0, prefix), word.slice(1, prefix + 1), word[0] + word.slice(2, prefix + 1)])];
}

async function json(url, init) {
  const response = await fetch(url, init);
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

/** Open the index whose entry file is at `url`; return { search(query, options) }. */
export async function openIndex(url) {
  // The entry file is the one whose name never changes: always asked again (a 304 when unchanged).
  const entry = await json(url, { cache: "no-cache" });
  const file = (name) => new URL(name, url).href;
  const site = new URL("../", url);  // the entry is search/index.json: page addresses are the site's
  const starts = [];  // each fragment's first page number
  let total = 0;
  for (const [, count] of entry.fragments) { starts.push(total); total += count; }
  const shards = new Map();  // prefix → Promise of { term: postings }
  const fragments = new Map();  // fragment number → Promise of its pages
  const decoded = new Map();  // term → [page numbers, weights]

  function kept(cache, key, name) {
    if (!cache.has(key)) {
      const loading = json(file(name));
      loading.catch(() => cache.delete(key));  // a failed fetch is tried again by the next query
      cache.set(key, loading);
    }
    return cache.get(key);
  }

  function shard(prefix) {
    return Object.hasOwn(entry.terms, prefix) ? kept(shards, prefix, entry.terms[prefix]) : Promise.resolve({});
  }

  async function page(number) {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {  // the last fragment starting at or before the page
      const middle = (low + high + 1) >> 1;
      if (starts[middle] <= number) low = middle; else high = middle - 1;
    }
    const pages = await kept(fragments, low, entry.fragments[low][0]);
    return pages[number - starts[low]];
  }

  function postings(term, flat) {
    // [first page, weight, gap, weight, …] → the pages and their weights
    if (!decoded.has(term)) {
      const pages = new Int32Array(flat.length / 2);
      const weights = new Int32Array(flat.length / 2);
      let at = 0;
      for (let i = 0; i < flat.length; i += 2) {
        at += flat[i];
        pages[i / 2] = at;
        weights[i / 2] = flat[i + 1];
      }
      decoded.set(term, [pages, weights]);
    }
    return decoded.get(term);
  }

  function stemmed(word, known) {
    // The word as the index has it: itself, when some term starts with it, or else the word without
    // its last letter or two ("gates" → "gate", "modelled" → "model"), which finds plurals and
    // other endings the pages do not use; null when neither is there.
    const terms = Object.keys(known).filter((term) => term !== "");
    for (let cut = 0; cut <= SHORTER; cut++) {
      const stem = word.slice(0, word.length - cut);
      if (cut && stem.length < SHORTEST) break;
      if (terms.some((term) => term.startsWith(stem))) return stem;
    }
    return null;
  }

  async function resolve(word) {
    // What a query word finds: { word, terms: the index's terms it stands for, of the shards
    // fetched as { term: postings }, exact: whether it finds its completions rather than a list }.
    const own = await shard(word.slice(0, entry.prefix));
    const stem = word.length < entry.prefix ? word : stemmed(word, own);
    if (stem !== null) return { word: stem, exact: true, found: own };
    if (word.length < NEAREST || !/^\p{L}+$/u.test(word)) return { word, exact: true, found: {} };
    // Not in the index: the terms one edit away ("recipocal" → "reciprocal"), found in its own shard
    // or in the two its near keys name, as their own terms or in their "" list of near terms
    const shards = await Promise.all(nearShards(word, entry.prefix).map(shard));
    const near = new Set(shards.flatMap((held) => [...Object.keys(held), ...(held[""] ?? [])])
      .filter((term) => term !== "" && oneEditApart(word, term)));
    const found = {};
    for (const term of [...near].sort()) {
      const held = shards.find((one) => Object.hasOwn(one, term)) ?? await shard(term.slice(0, entry.prefix));
      if (Object.hasOwn(held, term)) found[term] = held[term];
    }
    return { word, exact: false, found };
  }

  function scores(resolved) {
    // page → its best score for this word: the word itself, or a completion ("gate" → "gates",
    // weighing as much less as it is longer), or a term one edit away; rarer terms count more
    // (BM25's inverse document frequency)
    const { word, found } = resolved;
    const best = new Map();
    const completions = Object.keys(found).filter((term) => term !== "" && (!resolved.exact || term.startsWith(word)))
      .sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, COMPLETIONS);
    for (const term of completions) {
      const [pages, weights] = postings(term, found[term]);
      const rarity = Math.log(1 + (total - pages.length + 0.5) / (pages.length + 0.5));
      const factor = rarity * (resolved.exact ? word.length / term.length : 0.5);
      for (let i = 0; i < pages.length; i++) {
        const score = factor * weights[i];
        if (!(best.get(pages[i]) >= score)) best.set(pages[i], score);
      }
    }
    return best;
  }

  /** The sections that match `query`, the pages holding more of its words first: at most `shown`
   * sections from the best `pages` pages, best first; null if `wanted()` turned false meanwhile. */
  async function search(query, { shown = 20, pages = 8, wanted = () => true } = {}) {
    const typed = [...new Set(terms(query))];
    if (!typed.length) return { hits: [], more: false };
    const words = await Promise.all(typed.map(resolve));
    if (!wanted()) return null;
    const held = new Map();  // page → [how many of the words it holds, their scores' sum]
    for (const perWord of words.map(scores)) {
      for (const [number, score] of perWord) {
        const [count, sum] = held.get(number) ?? [0, 0];
        held.set(number, [count + 1, sum + score]);
      }
    }
    // a word no page holds (a name the course never uses) leaves the others to rank the pages
    const ranked = [...held].map(([number, [count, sum]]) => [number, count, sum]);
    ranked.sort((a, b) => b[1] - a[1] || b[2] - a[2] || a[0] - b[0]);
    const best = await Promise.all(ranked.slice(0, pages).map(([number]) => page(number)));
    if (!wanted()) return null;
    const matches = matcher(words, entry.prefix);
    const hits = best.flatMap((found, rank) => found.sections.map((section, index) => ({
      found, section, rank, index, score: sectionScore(index ? section[1] : found.title, section[2], words, entry.prefix, matches),
    }))).filter((hit) => hit.score > 0);
    // the sections that hold more of the words first, then the page's rank, then the page's order
    hits.sort((a, b) => b.score - a.score || a.rank - b.rank || a.index - b.index);
    return {
      hits: hits.slice(0, shown).map(({ found, section }) => hit(found, section, matches, site)),
      more: hits.length > shown || ranked.length > pages,
    };
  }

  return { search };
}

/** Return how well a section matches: one point for each query word it holds (heading or text),
 * and a part of another point as the word occurs more often; 0 when it holds none. */
function sectionScore(title, text, words, prefix, matches) {
  let score = 0;
  const titled = terms(title).filter(matches);
  const said = terms(text).filter(matches);
  for (const word of words) {
    const holds = finds(word, prefix);
    const count = TITLE_WEIGHT * titled.filter(holds).length + said.filter(holds).length;
    if (count) score += 1 + count / (count + 1.2);
  }
  return score;
}

function hit(page, [anchor, title, text], matches, site) {
  return {
    url: new URL(anchor ? `${page.url}#${anchor}` : page.url, site).href,
    title: marked(anchor ? `${page.title} › ${title}` : page.title, matches),
    label: page.label,
    excerpt: excerpt(text, matches),
  };
}

/** Return whether a folded term is what a resolved query word finds: the word or a completion of
 * it (a word shorter than the index's `prefix` matches only itself there, and so here), or one of
 * the terms one edit away it stands for. */
function finds({ word, exact, found }, prefix) {
  if (!exact) return (term) => Object.hasOwn(found, term);
  return (term) => (word.length < prefix ? term === word : term.startsWith(word));
}

/** Return whether a word of the text is one the query found. */
function matcher(words, prefix) {
  const tests = words.map((word) => finds(word, prefix));
  return (piece) => {
    const lower = folded(piece);
    return tests.some((test) => test(lower));
  };
}

/** Return `text` as [text, matched] pieces. */
function marked(text, matches) {
  return text.split(SPLIT).map((piece, i) => [piece, i % 2 === 1 && matches(piece)]);
}

/** Return EXCERPT words of `text` around its first match, as [text, matched] pieces. */
export function excerpt(text, matches) {
  const pieces = text.split(SPLIT);
  let first = pieces.findIndex((piece, i) => i % 2 === 1 && matches(piece));
  if (first < 0) first = 1;
  const start = Math.max(1, first - 2 * BEFORE);
  const end = Math.min(pieces.length, start + 2 * EXCERPT);
  const shown = pieces.slice(start, end).map((piece, i) => [piece, i % 2 === 0 && matches(piece)]);
  if (start > 1) shown.unshift(["… ", false]);
  if (end < pieces.length - 1) shown.push([" …", false]);
  return shown;
}
