// Site search with Pagefind. Its script loads only when search first opens, and each query then
// fetches only the index chunks and page fragments it needs. Open with the header button or "/",
// close with Escape; each result is one section of a page and links to it.
import { h } from "coursegen/dom.js";

const dialog = document.querySelector("[data-search]");
const opener = document.querySelector("[data-search-open]");
const PAGES = 8;  // pages whose fragments a query loads: the first results, not every page that matches
const SHOWN = 20;  // sections listed at most
const FAILED = "Search could not load. The course map lists every unit.";
let engine = null;
let asked = 0;  // the latest query's number: an older one finishing later must not replace its results

async function loadEngine() {
  const pagefind = await import(new URL(dialog.dataset.searchLib, document.baseURI).href);
  // On the page's own thread: a query's work is milliseconds on real prose (0.2 s at worst on the
  // benchmark's 2,000 generated lessons), and a worker would be 40 KB more to fetch first.
  await pagefind.options({ excerptLength: 24, noWorker: true });
  await pagefind.init();
  return pagefind;
}

function score(section) {
  return section.weighted_locations.reduce((sum, location) => sum + location.balanced_score, 0);
}

async function sections(query, number) {
  // Pagefind ranks pages; a page's sections (one per heading or question) are ranked by their own matches.
  const found = await engine.search(query);
  if (number !== asked) return null;  // typed on meanwhile: its fragments and excerpts would go unseen
  const pages = await Promise.all(found.results.slice(0, PAGES).map((result) => result.data()));
  const hits = pages.flatMap((page) => page.sub_results.map((section) => ({ page, section })));
  hits.sort((a, b) => score(b.section) - score(a.section));  // stable: equal scores keep the pages' order
  return { hits: hits.slice(0, SHOWN), more: hits.length > SHOWN || found.results.length > PAGES };
}

function highlighted(excerpt) {
  // Pagefind's excerpt is HTML: escaped text with <mark> around the matched words. It is read in a
  // separate, inert document (nothing in it can run or load) and only its text and marks are
  // built into this page, as text nodes and new <mark> elements.
  const parsed = new DOMParser().parseFromString(excerpt, "text/html").body;
  return [...parsed.childNodes].map((node) => (node.nodeName === "MARK" ? h("mark", {}, node.textContent)
    : node.textContent));
}

function resultItem({ page, section }) {
  const title = page.meta.title;
  return h("li", {},
    h("a", { href: new URL(section.url, document.baseURI).href, class: "search-hit-title" },
      section.anchor ? `${title} › ${section.title}` : title),
    " ", h("span", { class: "search-hit-where" }, page.meta.label ?? ""),
    h("p", { class: "search-hit-text" }, ...highlighted(section.excerpt)));
}

async function show(query) {
  if (!engine) return;  // still loading: "No results" would be wrong; open() shows them once it has the index
  const number = ++asked;
  const started = performance.now();
  const list = dialog.querySelector("[data-search-results]");
  const status = dialog.querySelector("[data-search-status]");
  let found = { hits: [], more: false };
  try {
    if (query.trim()) found = await sections(query, number);
  } catch {  // a chunk or fragment that could not be fetched (offline before the service worker had it)
    if (number === asked) status.textContent = FAILED;
    return;
  }
  if (number !== asked) return;
  const { hits, more } = found;
  performance.measure("coursegen:search", { start: started });  // for benchmarks/search.py
  list.replaceChildren(...hits.map(resultItem));
  status.textContent = !query.trim() ? "" : hits.length === 0 ? `No results for “${query}”.`
    : `${hits.length}${more ? "+" : ""} result${hits.length === 1 ? "" : "s"} for “${query}”.`;
}

async function open() {
  const input = dialog.querySelector("input");
  dialog.showModal();
  input.focus();
  if (!engine) {
    const status = dialog.querySelector("[data-search-status]");
    status.textContent = "Loading the search index…";
    try {
      engine = await loadEngine();
      status.textContent = "";
      await show(input.value);
    } catch {
      engine = null;
      status.textContent = FAILED;
    }
  }
}

function typingIn(target) {
  return target.closest("input, textarea, select, [contenteditable=true]") !== null;
}

if (dialog && opener) {
  const input = dialog.querySelector("input");
  let timer = 0;
  opener.hidden = false;
  opener.addEventListener("click", open);
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => show(input.value), 80); });
  dialog.querySelector("form").addEventListener("submit", (event) => {
    event.preventDefault();
    dialog.querySelector("[data-search-results] a")?.click();
  });
  dialog.querySelector("[data-search-close]").addEventListener("click", () => dialog.close());
  input.addEventListener("keydown", (event) => {
    // A search field swallows the first Escape to clear itself; here Escape always closes search.
    if (event.key === "Escape") { event.preventDefault(); dialog.close(); }
  });
  let following = false;  // a result was chosen: focus goes to its section, not back to the opener
  dialog.querySelector("[data-search-results]").addEventListener("click", (event) => {
    if (event.target.closest("a")) { following = true; dialog.close(); }
  });
  dialog.addEventListener("close", () => { if (!following) opener.focus(); following = false; });
  dialog.addEventListener("click", (event) => { if (event.target === dialog) dialog.close(); });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    // composedPath()[0]: the element typed in, also inside a shadow root (the exercises' code editor)
    if (dialog.open || typingIn(event.composedPath()[0])) return;
    event.preventDefault();
    open();
  });
}
