// Progress marks outside the questions: "visited" and "done" on the course map and the progress map,
// where to go next, the questions due for review (as links), and a word when stored progress was unreadable
// or cannot be saved.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

// Own properties only: a slug such as `constructor` is no visit (Object.prototype has one).
const isDone = (data, slug) => Object.hasOwn(data.reviews, slug) && data.reviews[slug].done === true;
const isVisited = (data, slug) => Object.hasOwn(data.visited, slug) && data.visited[slug] === true;

/** Add a visited / done mark to every [data-unit] item in a course or progress map. A unit is done when
 * every question on it is answered and every exercise passed (review.js records it). */
export function markUnits(root, data) {
  for (const item of root.querySelectorAll(".course-map-unit[data-unit], [data-progress-map] [data-unit]")) {
    const slug = item.dataset.unit;
    const done = isDone(data, slug);
    const label = done ? t("progress.done") : isVisited(data, slug) ? t("progress.visited") : "";
    item.querySelector(".progress-visited")?.remove();
    item.classList.toggle("is-visited", Boolean(label));
    item.classList.toggle("is-done", done);
    if (!label) continue;
    // On the course map the mark joins the unit's number line, which is there already: nothing moves.
    (item.querySelector(".course-map-number") ?? item).append(" ", h("span", { class: "progress-visited" }, label));
  }
}

/** Point the course map's "Start" link at the first written unit not done yet, once the learner has begun. */
export function showNext(box, data) {
  if (!box) return;
  const units = [...document.querySelectorAll(".course-map-unit.is-written[data-unit]")];
  const begun = units.some((item) => isVisited(data, item.dataset.unit) || isDone(data, item.dataset.unit));
  if (!begun) return;  // the page's own "Start with …" stands
  const next = units.find((item) => !isDone(data, item.dataset.unit));
  const link = box.querySelector("a");
  if (!next) {
    box.querySelector("[data-course-next-verb]").textContent = t("map.all_done");
    return;
  }
  const title = next.querySelector(".course-map-title");
  box.querySelector("[data-course-next-verb]").textContent = t("map.continue_with");
  link.href = title.getAttribute("href");
  const label = next.querySelector(".course-map-number").firstChild.textContent.trim();  // not its mark
  link.textContent = `${label} · ${title.textContent.trim()}`;
}

/** While questions are due, make the course map's main link the review session (its URL is the box's
 * data-review-session) instead of the next unit: the due list below still links each question. */
export function offerSession(box, due) {
  if (!box?.dataset.reviewSession || !due.length) return;
  box.querySelector("[data-course-next-verb]").textContent = t("map.review_due");
  const link = box.querySelector("a");
  link.href = box.dataset.reviewSession;
  link.textContent = due.length === 1 ? t("map.session_one") : t("map.session_other", { count: due.length });
}

/** Say once, in a note that covers no text, that stored progress could not be read; offer the damaged copy. */
export function showCorrupt(store) {
  const text = store.corruptText();
  if (!text) return;
  const save = h("button", { type: "button" }, t("progress.save_damaged"));
  const dismiss = h("button", { type: "button" }, t("progress.dismiss"));
  const note = h("aside", { class: "progress-notice", role: "alert", "aria-label": t("progress.unreadable_label") },
    h("p", {}, t("progress.unreadable")), save, " ", dismiss);
  save.addEventListener("click", () => {
    const link = h("a", { href: URL.createObjectURL(new Blob([text], { type: "text/plain" })),
      download: "damaged-progress.txt" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  });
  dismiss.addEventListener("click", () => { store.forgetCorrupt(); note.remove(); });
  document.body.append(note);
}

/** Return a function that says, in a visible note inside a polite live region, that progress cannot be saved
 * in this browser. The region is in the page from the start (empty, so it takes no room): a screen reader
 * announces the note when it appears. */
export function unsavedNotice() {
  const region = h("div", { "aria-live": "polite", "data-progress-unsaved": "" });
  document.body.append(region);
  return () => {
    const dismiss = h("button", { type: "button" }, t("progress.dismiss"));
    const note = h("aside", { class: "progress-notice", "aria-label": t("progress.unsaved_label") },
      h("p", {}, t("progress.unsaved")), dismiss);
    dismiss.addEventListener("click", () => note.remove());
    region.append(note);
  };
}

/** Fill the course map's due-for-review section; it stays hidden while nothing is due. */
export function showDue(section, due) {
  if (!section) return;
  const count = section.querySelector("[data-due-count]");
  const list = section.querySelector("[data-due-list]");
  section.hidden = !due.length;
  if (!due.length) {
    count.textContent = "";
    list.replaceChildren();
    return;
  }
  count.textContent = due.length === 1 ? t("due.count_one") : t("due.count_other", { count: due.length });
  list.replaceChildren(...due.map((item) => h("li", {}, h("a", { href: item.url }, item.prompt))));
}
