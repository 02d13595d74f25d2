// Site search. The index's code loads only when search first opens, and each query then fetches
// only the files of the words typed and the fragments of the first results' pages. Open with the
// header button or "/", close with Escape; each result is one section of a page and links to it.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

const dialog = document.querySelector("[data-search]");
const opener = document.querySelector("[data-search-open]");
const PAGES = 8;  // pages whose fragments a query loads: the first results, not every page that matches
const SHOWN = 20;  // sections listed at most
const FAILED = t("search.failed");
let engine = null;
let asked = 0;  // the latest query's number: an older one finishing later must not replace its results

async function loadEngine() {
  const { openIndex } = await import("coursegen/search-index.js");
  return openIndex(new URL(dialog.dataset.searchIndex, document.baseURI).href);
}

function marked(pieces) {
  return pieces.map(([text, matched]) => (matched ? h("mark", {}, text) : text));
}

function resultItem(hit) {
  return h("li", {},
    h("a", { href: hit.url, class: "search-hit-title" }, ...marked(hit.title)),
    " ", h("span", { class: "search-hit-where" }, hit.label),
    h("p", { class: "search-hit-text" }, ...marked(hit.excerpt)));
}

async function show(query) {
  if (!engine) return;  // still loading: "No results" would be wrong; open() shows them once it has the index
  const number = ++asked;
  const started = performance.now();
  const list = dialog.querySelector("[data-search-results]");
  const status = dialog.querySelector("[data-search-status]");
  let found = { hits: [], more: false };
  try {
    if (query.trim()) {
      found = await engine.search(query, { shown: SHOWN, pages: PAGES, wanted: () => number === asked });
    }
  } catch {  // a chunk or fragment that could not be fetched (offline before the service worker had it)
    if (number === asked) status.textContent = FAILED;
    return;
  }
  if (number !== asked || found === null) return;  // typed on meanwhile: its fragments would go unseen
  // The same query shown again (the index arrived as the learner typed) keeps the list, and the focus in it.
  if (query === list.dataset.query && list.childElementCount) return;
  list.dataset.query = query;
  const { hits, more } = found;
  performance.measure("coursegen:search", { start: started });  // for benchmarks/search.py
  list.replaceChildren(...hits.map(resultItem));
  status.textContent = !query.trim() ? "" : hits.length === 0 ? t("search.no_results", { query })
    : t(hits.length === 1 && !more ? "search.results_one" : "search.results_other", { count: `${hits.length}${more ? "+" : ""}`, query });
}

async function open() {
  const input = dialog.querySelector("input");
  dialog.showModal();
  input.focus();
  if (!engine) {
    const status = dialog.querySelector("[data-search-status]");
    status.textContent = t("search.loading");
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
  // ArrowDown from the field enters the results; ArrowUp and ArrowDown move between them, and ArrowUp
  // from the first result returns to the field (as in a combobox's list, without taking Tab's place).
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const links = [...dialog.querySelectorAll("[data-search-results] a")];
    const at = links.indexOf(document.activeElement);
    if (!links.length || (at < 0 && document.activeElement !== input)) return;
    event.preventDefault();
    const next = event.key === "ArrowDown" ? Math.min(at + 1, links.length - 1) : at - 1;
    (next < 0 ? input : links[next]).focus();
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
