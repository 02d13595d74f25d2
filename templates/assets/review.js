// Review runtime for unit pages and the course map. It marks the page visited, then enhances every
// [data-question] (commit before reveal, self-score, schedule) and the [data-tally]. Modules are
// named "coursegen/…" and the page's import map resolves them to their content-hashed files; the
// question modules load only on pages that have questions.
import { h } from "coursegen/dom.js";
import { courseOf, openStore } from "coursegen/progress.js";
import { markUnits, offerSession, showCorrupt, showDue, showNext, unsavedNotice } from "coursegen/review/marks.js";

const config = readConfig();

function readConfig() {
  try {
    const data = JSON.parse(document.getElementById("coursegen-review")?.textContent ?? "null");
    return data && typeof data.course === "string" ? data : null;
  } catch {
    return null;
  }
}

async function start({ course, id, page }) {
  const store = openStore(courseOf({ title: course, id: typeof id === "string" ? id : "" }), undefined,
    { unsaved: unsavedNotice() });
  if (page) store.visit(page);
  const questions = [...document.querySelectorAll("[data-question]")];
  if (page && !questions.length) store.markReview(page, true);  // nothing to answer: reading it is doing it
  askAgainWhenDue(questions, store, new Date());
  markUnits(document, store.data);
  showNext(document.querySelector("[data-course-next]"), store.data);
  showDue(document.querySelector("[data-due]"), store.due(new Date()));
  offerSession(document.querySelector("[data-course-next]"), store.due(new Date()));
  showCorrupt(store);
  if (page && document.querySelector("[data-code-cell]")) import("coursegen/cells.js").then((cells) => cells.enhanceCells(store, page));
  if (questions.length) await enhanceQuestions(questions, store, page);
  document.documentElement.dataset.review = "ready"; // for tests and styles: enhancement is done
}

async function enhanceQuestions(questions, store, page) {
  const [schedule, recall, choice, tally, transfer, exercise, blanks, order, multiple, numeric] = await Promise.all([
    import("coursegen/review/schedule.js"), import("coursegen/review/recall.js"),
    import("coursegen/review/choice.js"), import("coursegen/review/tally.js"),
    import("coursegen/review/transfer.js"), import("coursegen/review/exercise.js"),
    import("coursegen/review/blanks.js"), import("coursegen/review/order.js"),
    import("coursegen/review/multiple.js"), import("coursegen/review/numeric.js")]);
  // The FSRS library is the largest module: fetch it at the first score, not with the page.
  let scheduler = null;
  const getScheduler = async () => (scheduler ??= schedule.makeScheduler(await import("coursegen/vendor/ts-fsrs.js")));
  const announcer = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  document.body.append(announcer);
  const section = document.querySelector("[data-tally]");
  const refresh = () => {
    if (section) tally.update(section, questions, (q) => store.record(keyOf(q)));
    store.markReview(page, questions.every((q) => isDone(q, store.record(keyOf(q)))));
  };
  const ctx = {
    store, seed: store.data.seed, keyOf,
    announce(text) { announcer.textContent = ""; requestAnimationFrame(() => { announcer.textContent = text; }); },
    score(question, value) {
      // The score and the tally change at once; the next-due date follows when the scheduler is in.
      const key = keyOf(question);
      const previous = store.record(key).card;
      store.update(key, { score: value, url: `${page}.html#${question.id}`, prompt: promptOf(question) });
      refresh();
      return getScheduler().then((scheduler) => {
        const card = scheduler.next(previous, value, new Date());
        if (store.record(key).score === value) store.update(key, { card });
        return card;
      });
    },
    changed: refresh,
  };
  for (const q of questions) {  // warm the scheduler up as soon as a learner starts on a question
    for (const type of ["focusin", "pointerdown"]) q.addEventListener(type, getScheduler, { once: true });
  }
  const kinds = { choice, exercise, blanks, order, numeric };
  const kindOf = (q) => (q.querySelector("[data-options][data-multiple]") ? multiple : kinds[q.dataset.kind] ?? recall);
  const views = questions.map((q) => kindOf(q).enhance(q, ctx));
  if (section) {
    transfer.mount(section, { ...ctx, reset: () => views.forEach((v) => v.reset()),
      reload: () => views.forEach((v) => v.restore()) });
  }
  refresh();
}

/** A question is done once scored; an exercise, once scored yes (its checks passed, or the learner says so). */
function isDone(question, record) {
  return question.dataset.kind === "exercise" ? record.score === "yes" : Boolean(record.score);
}

/** A question due for review is asked afresh: last time's answer and model answer do not greet the learner.
 * Its schedule (card), link and, for an exercise, its code stay; a numeric question with variants draws new numbers. */
function askAgainWhenDue(questions, store, now) {
  for (const question of questions) {
    const key = keyOf(question);
    const { card, revealed, score } = store.record(key);
    if (!card || Date.parse(card.due) > now.getTime() || (!revealed && !score)) continue;
    store.update(key, { text: undefined, aloud: undefined, revealed: undefined, score: undefined,
      choice: undefined, self: undefined, blanks: undefined, order: undefined, levels: undefined,
      choices: undefined, variant: undefined });
  }
}

function keyOf(question) {
  return `${config.page}/${question.dataset.question}`;
}

function promptOf(question) {
  const prompt = question.querySelector(".question-prompt");
  // A fill-in-the-blanks question's sentences have gaps (their answers are not in the page's text): its first
  // paragraph, the instruction, names it instead.
  const paragraph = [...prompt.querySelectorAll(":scope > p")].at(question.dataset.kind === "blanks" ? 0 : -1) ?? prompt;
  return paragraph.textContent.trim().replace(/\s+/g, " ").slice(0, 200);
}

if (config) start(config);
