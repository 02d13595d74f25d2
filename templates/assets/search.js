// Site search. The vendored MiniSearch and the build-time corpus load only when search first opens.
// Open with the header button or "/", close with Escape; results link to the section that matches.
const dialog = document.querySelector("[data-search]");
const opener = document.querySelector("[data-search-open]");
const SNIPPET = 160;
let engine = null;

async function loadEngine() {
  const base = document.baseURI;
  const [{ default: MiniSearch }, corpus] = await Promise.all([
    import(new URL(dialog.dataset.searchLib, base).href),
    fetch(new URL(dialog.dataset.searchIndex, base), { cache: "no-cache" }).then((r) => r.json()),
  ]);
  const search = new MiniSearch({
    fields: corpus.fields, storeFields: corpus.storeFields,
    searchOptions: { prefix: true, fuzzy: 0.2, boost: { title: 2 }, combineWith: "AND" },
  });
  search.addAll(corpus.documents);
  return search;
}

function snippet(text, terms) {
  const lower = text.toLowerCase();
  const at = Math.min(...terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0), text.length);
  const start = at === text.length ? 0 : Math.max(0, at - 40);
  const cut = text.slice(start, start + SNIPPET);
  return (start ? "…" : "") + cut + (start + SNIPPET < text.length ? "…" : "");
}

function resultItem(hit) {
  const item = document.createElement("li");
  const link = document.createElement("a");
  link.href = new URL(hit.url, document.baseURI).href;
  link.className = "search-hit-title";
  link.textContent = hit.title;
  const where = document.createElement("span");
  where.className = "search-hit-where";
  where.textContent = hit.where;
  const text = document.createElement("p");
  text.className = "search-hit-text";
  text.textContent = snippet(hit.text, hit.terms);
  item.append(link, " ", where, text);
  return item;
}

function show(query) {
  if (!engine) return;  // still loading: "No results" would be wrong; open() shows them once it has the index
  const list = dialog.querySelector("[data-search-results]");
  const status = dialog.querySelector("[data-search-status]");
  const hits = query.trim() ? engine.search(query).slice(0, 20) : [];
  list.replaceChildren(...hits.map(resultItem));
  status.textContent = !query.trim() ? "" : hits.length === 0 ? `No results for “${query}”.`
    : `${hits.length}${hits.length === 20 ? "+" : ""} result${hits.length === 1 ? "" : "s"} for “${query}”.`;
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
      show(input.value);
    } catch {
      status.textContent = "Search could not load. The course map lists every unit.";
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
    if (dialog.open || typingIn(event.target)) return;
    event.preventDefault();
    open();
  });
}
