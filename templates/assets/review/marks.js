// Progress marks outside the questions: "visited" and "review done" on the course map and the
// progress map, and on the course map the questions due for review, as links.
import { h } from "coursegen/dom.js";

/** Add a visited / review-done mark to every [data-unit] item in a course or progress map. */
export function markUnits(root, data) {
  for (const item of root.querySelectorAll(".course-map-unit[data-unit], [data-progress-map] [data-unit]")) {
    const slug = item.dataset.unit;
    // Own properties only: a slug such as `constructor` is no visit (Object.prototype has one).
    const label = Object.hasOwn(data.reviews, slug) && data.reviews[slug].done ? "review done"
      : Object.hasOwn(data.visited, slug) && data.visited[slug] === true ? "visited" : "";
    item.querySelector(".progress-visited")?.remove();
    item.classList.toggle("is-visited", Boolean(label));
    if (!label) continue;
    item.append(" ", h("span", { class: "progress-visited" }, label));
  }
}

/** Fill the course map's due-for-review section (hidden until there is something to say). */
export function showDue(section, due) {
  if (!section) return;
  const count = section.querySelector("[data-due-count]");
  const list = section.querySelector("[data-due-list]");
  section.hidden = false;
  if (!due.length) {
    count.textContent = "No questions are due for review.";
    list.replaceChildren();
    return;
  }
  count.textContent = due.length === 1 ? "1 question is due for review." : `${due.length} questions are due for review.`;
  list.replaceChildren(...due.map((item) => h("li", {}, h("a", { href: item.url }, item.prompt))));
}
