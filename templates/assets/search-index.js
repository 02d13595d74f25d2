// The course's search index, read a few files at a time (coursegen/features/search/index.py writes
// it and explains its layout): the entry file first, then for each query the files of the terms typed
// and the fragments of the first results' pages. Every file fetched is kept for the next query.

const WORD = /[\p{L}\p{N}]+/gu;  // as sections.py's WORD: letters and digits
const SPLIT = /([\p{L}\p{N}]+)/u;  // split() keeps the words at odd places, what lies between at even ones
const LONGEST = 40;  // characters: index.py leaves longer runs out of the index
const TITLE_WEIGHT = 3;  // as sections.py's: a word in a heading counts three times
const COMPLETIONS = 64;  // a word's completions scored at most (the shortest): "a" or "co" stays fast
const SHORTER = 2;  // letters a word the index lacks may lose from its end ("gates" finds "gate")
const SHORTEST = 4;  // letters such a shortened word keeps at least
const EXCERPT = 24;  // words quoted from a section
const BEFORE = 6;  // of them, before the first match

/** Return the index terms of `text`, as sections.py cuts them. */
export function terms(text) {
  return (text.toLowerCase().match(WORD) ?? []).filter((word) => word.length <= LONGEST);
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

  function indexed(word, known) {
    // The word as the index has it: itself, when some term starts with it, or else the word without
    // its last letter or two ("gates" → "gate", "modelled" → "model"), which finds plurals and
    // other endings the pages do not use.
    const terms = Object.keys(known);
    for (let cut = 0; cut <= SHORTER; cut++) {
      const stem = word.slice(0, word.length - cut);
      if (cut && stem.length < SHORTEST) break;
      if (terms.some((term) => term.startsWith(stem))) return stem;
    }
    return word;
  }

  function scores(word, found) {
    // page → its best score for this word: the word itself, or a completion ("gate" → "gates",
    // weighing as much less as it is longer); rarer terms count more (BM25's inverse document frequency)
    const best = new Map();
    const completions = Object.keys(found).filter((term) => term.startsWith(word))
      .sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, COMPLETIONS);
    for (const term of completions) {
      const [pages, weights] = postings(term, found[term]);
      const rarity = Math.log(1 + (total - pages.length + 0.5) / (pages.length + 0.5));
      const factor = rarity * (word.length / term.length);
      for (let i = 0; i < pages.length; i++) {
        const score = factor * weights[i];
        if (!(best.get(pages[i]) >= score)) best.set(pages[i], score);
      }
    }
    return best;
  }

  /** The sections that match `query` on the pages holding all its words: at most `shown` sections
   * from the best `pages` pages, best first; null if `wanted()` turned false meanwhile. */
  async function search(query, { shown = 20, pages = 8, wanted = () => true } = {}) {
    const typed = [...new Set(terms(query))];
    if (!typed.length) return { hits: [], more: false };
    const loaded = await Promise.all(typed.map((word) => shard(word.slice(0, entry.prefix))));
    if (!wanted()) return null;
    const words = typed.map((word, i) => (word.length < entry.prefix ? word : indexed(word, loaded[i])));
    const perWord = words.map((word, i) => scores(word, loaded[i])).sort((a, b) => a.size - b.size);
    const ranked = [];
    for (const [number, score] of perWord[0]) {
      let sum = score;
      for (const other of perWord.slice(1)) {
        const more = other.get(number);
        if (more === undefined) { sum = -1; break; }
        sum += more;
      }
      if (sum >= 0) ranked.push([number, sum]);
    }
    ranked.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
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

/** Return whether a lower-case term is `word` or a completion of it (a word shorter than the
 * index's `prefix` matches only itself there, and so here). */
function finds(word, prefix) {
  return (term) => (word.length < prefix ? term === word : term.startsWith(word));
}

/** Return whether a word of the text is one the query found. */
function matcher(words, prefix) {
  const tests = words.map((word) => finds(word, prefix));
  return (piece) => {
    const lower = piece.toLowerCase();
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
