// The tally: answered / total, yes / partly / no per lesson and per topic, and what to revisit,
// as links to the lessons and sections behind every "no" or "partly".
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

const originals = new WeakMap(); // the build-time study-guide lists, kept to copy links from

/** Return the counts the tally shows for these questions and their stored records. */
export function count(questions, recordOf) {
  const rows = new Map();
  const totals = { answered: 0, yes: 0, partly: 0, no: 0 };
  const revisit = { lessons: new Set(), sections: new Set() };
  const row = (name) => rows.get(name) ?? rows.set(name, { yes: 0, partly: 0, no: 0, open: 0 }).get(name);
  for (const q of questions) {
    const score = recordOf(q).score;
    const names = q.dataset.lessons.split(" ").filter(Boolean).map((n) => `lesson:${n}`);
    if (q.dataset.topic) names.push(`topic:${q.dataset.topic}`);
    for (const name of names) row(name)[score ?? "open"] += 1;
    if (!score) continue;
    totals.answered += 1;
    totals[score] += 1;
    if (score !== "yes") {
      names.filter((n) => n.startsWith("lesson:")).forEach((n) => revisit.lessons.add(n.slice(7)));
      if (q.dataset.revisit) revisit.sections.add(q.dataset.revisit);
    }
  }
  const order = ([name]) => [name.startsWith("topic:") ? 1 : 0, Number(name.slice(7)) || 0, name];
  const sorted = [...rows].sort((a, b) => compare(order(a), order(b)));
  return { rows: new Map(sorted), totals, revisit, total: questions.length };
}

function compare(a, b) {
  for (let i = 0; i < a.length; i += 1) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/** Redraw the tally section from the stored scores. */
export function update(section, questions, recordOf) {
  const tally = count(questions, recordOf);
  const box = section.querySelector("[data-tally-revisit]");
  if (!originals.has(box)) originals.set(box, box.cloneNode(true));
  section.querySelector("[data-tally-summary]").textContent = summary(tally);
  section.querySelector("[data-tally-table]").replaceChildren(table(originals.get(box), tally));
  revisitList(box, originals.get(box), tally);
  showProgress(document.querySelector("[data-review-progress]"), tally);
}

/** Fill the progress bar at the top of a review (partials/review_progress.html): answered / total. */
function showProgress(bar, { totals, total }) {
  if (!bar) return;
  bar.hidden = false;
  const text = t("review.progress", { answered: totals.answered, total });
  bar.querySelector("[data-review-progress-text]").textContent = text;
  const meter = bar.querySelector("[data-review-progress-bar]");
  meter.value = totals.answered;
  meter.max = total;
  meter.setAttribute("aria-valuetext", text);
}

function summary({ totals, total, revisit }) {
  const scored = t("tally.scored", { answered: totals.answered, total, yes: totals.yes, partly: totals.partly, no: totals.no });
  if (!totals.answered) return `${scored} ${t("tally.start")}`;
  if (!revisit.lessons.size) return `${scored} ${t("tally.nothing_yet")}`;
  const units = revisit.lessons.size;
  return `${scored} ${units === 1 ? t("tally.revisit_one") : t("tally.revisit_other", { count: units })}`;
}

function table(original, { rows }) {
  const head = h("tr", {}, h("th", { scope: "col" }, t("tally.column_unit")),
    ...["tally.yes", "tally.partly", "tally.no", "tally.not_yet"].map((key) => h("th", { scope: "col" }, t(key))));
  const body = [...rows].map(([name, c]) => h("tr", {},
    h("th", { scope: "row" }, rowLabel(original, name)),
    ...[c.yes, c.partly, c.no, c.open].map((n) => h("td", {}, String(n)))));
  // tabindex: on a phone the table scrolls sideways, and a keyboard must reach it (as widget tables do)
  return h("table", { tabindex: "0" }, h("caption", {}, t("tally.caption")), h("thead", {}, head), h("tbody", {}, ...body));
}

function rowLabel(original, name) {
  const [kind, value] = [name.slice(0, name.indexOf(":")), name.slice(name.indexOf(":") + 1)];
  if (kind === "topic") return t("tally.topic", { topic: value });
  const item = original.querySelector(`[data-lesson="${CSS.escape(value)}"]`);
  return item ? item.textContent.trim() : `Unit ${value}`;
}

function revisitList(box, original, { revisit, totals }) {
  if (!totals.answered) { box.replaceChildren(...original.cloneNode(true).childNodes); return; }
  if (!revisit.lessons.size) {
    box.replaceChildren(h("p", { class: "tally-clear" }, t("tally.all_yes")));
    return;
  }
  const sections = [...revisit.sections];
  const links = [...revisit.lessons].sort((a, b) => a - b).map((number) => {
    const lesson = original.querySelector(`[data-lesson="${CSS.escape(number)}"] a`);
    if (!lesson) return null;
    const page = lesson.getAttribute("href");
    const own = sections.filter((url) => url.split("#")[0] === page);
    const nested = own.map((url) => sectionLink(original, url, true)).filter(Boolean);
    return h("li", {}, h("a", { href: page }, lesson.textContent),
      ...(nested.length ? [h("ul", {}, ...nested)] : []));
  }).filter(Boolean);
  const pages = new Set(links.map((li) => li.firstChild.getAttribute("href")));
  for (const url of sections.filter((u) => !pages.has(u.split("#")[0]))) {
    const item = sectionLink(original, url, false);
    if (item) links.push(item);
  }
  box.replaceChildren(h("p", {}, t("tally.revisit_list")), h("ul", { class: "tally-revisit-list" }, ...links));
}

function sectionLink(original, url, nested) {
  const item = original.querySelector(`[data-revisit-target="${CSS.escape(url)}"]`);
  const link = item?.querySelector("a");
  if (!link) return null;
  const text = nested && item.dataset.heading ? t("tally.section", { section: item.dataset.heading }) : t("tally.section", { section: link.textContent });
  return h("li", {}, h("a", { href: link.getAttribute("href") }, text));
}
