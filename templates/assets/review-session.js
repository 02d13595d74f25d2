// The review session (review-session.html): every question due in this browser, one at a time,
// interleaved across the course (review/session.js), each fetched from its own page and enhanced by
// the same question modules as there, scored and scheduled into the same store; then back to the map.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { courseOf, openStore } from "coursegen/progress.js";
import { unsavedNotice } from "coursegen/review/marks.js";
import { interleaved } from "coursegen/review/session.js";

const root = document.querySelector("[data-session]");
const status = document.querySelector("[data-session-status]");
const holder = document.querySelector("[data-session-question]");
const next = document.querySelector("[data-session-next]");
const progress = document.querySelector("[data-session-progress]");

async function start(config) {
  const store = openStore(courseOf({ title: config.course, id: typeof config.id === "string" ? config.id : "" }),
    undefined, { unsaved: unsavedNotice() });
  const items = interleaved(store.due(new Date()));
  if (!items.length) {
    status.textContent = t("session.none");
    document.documentElement.dataset.review = "ready";
    return;
  }
  const [schedule, recall, choice] = await Promise.all([import("coursegen/review/schedule.js"),
    import("coursegen/review/recall.js"), import("coursegen/review/choice.js")]);
  let scheduler = null;
  const getScheduler = async () => (scheduler ??= schedule.makeScheduler(await import("coursegen/vendor/ts-fsrs.js")));
  const announcer = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  document.body.append(announcer);
  status.textContent = items.length === 1 ? t("due.count_one") : t("due.count_other", { count: items.length });
  root.hidden = false;
  let at = -1;
  const ask = async () => {
    at += 1;
    next.hidden = true;
    if (at === items.length) return finish(items.length);
    progress.textContent = t("session.progress", { number: at + 1, total: items.length });
    const item = items[at];
    const question = await fetchQuestion(item);
    if (!question) return ask();  // the page no longer holds it: on to the next
    const ctx = {
      store, seed: store.data.seed, keyOf: () => item.id,
      announce(text) { announcer.textContent = ""; requestAnimationFrame(() => { announcer.textContent = text; }); },
      score(_question, value) {
        // as review.js scores on the question's own page: the score, then the next due date from FSRS
        const previous = store.record(item.id).card;
        store.update(item.id, { score: value, url: item.url, prompt: item.prompt });
        next.hidden = false;
        return getScheduler().then((made) => {
          const card = made.next(previous, value, new Date());
          if (store.record(item.id).score === value) store.update(item.id, { card });
          return card;
        });
      },
      changed() {},
    };
    holder.replaceChildren(question);
    if (question.dataset.kind === "exercise") {  // its Python runs on its own page
      question.append(h("p", {}, h("a", { href: item.url }, t("session.exercise"))));
      next.hidden = false;
    } else {
      askAfresh(store, item.id);
      (question.dataset.kind === "choice" ? choice : recall).enhance(question, ctx);
    }
    holder.focus();
  };
  next.addEventListener("click", ask);
  await ask();
  document.documentElement.dataset.review = "ready";
}

/** Return the question element of a due item, fetched from its page, or null. */
async function fetchQuestion(item) {
  try {
    const url = new URL(item.url, document.baseURI);
    const response = await fetch(url);
    if (!response.ok) return null;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const found = page.getElementById(decodeURIComponent(url.hash.slice(1)));
    if (!found?.matches("[data-question]")) return null;
    // its links and images are relative to its page
    for (const link of found.querySelectorAll("a[href]")) link.href = new URL(link.getAttribute("href"), url).href;
    for (const image of found.querySelectorAll("img[src]")) image.src = new URL(image.getAttribute("src"), url).href;
    return document.importNode(found, true);
  } catch {
    return null;
  }
}

/** A due question is asked afresh, as review.js does on its page: last time's answer does not greet the learner. */
function askAfresh(store, key) {
  store.update(key, { text: undefined, aloud: undefined, revealed: undefined, score: undefined,
    choice: undefined, self: undefined });
}

function finish(count) {
  progress.textContent = "";
  holder.replaceChildren();
  status.textContent = count === 1 ? t("session.done_one") : t("session.done_other", { count });
  document.querySelector("[data-session-back]").focus();
}

const config = JSON.parse(document.getElementById("coursegen-session")?.textContent ?? "null");
if (config && root) start(config);
