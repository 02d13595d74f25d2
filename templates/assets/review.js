// Review runtime for unit pages and the course map. It marks the page visited, then enhances every
// [data-question] (commit before reveal, self-score, schedule) and the [data-tally]. Asset names are
// content-hashed, so modules are loaded by the URLs in the #coursegen-review data block and receive
// what they need as arguments instead of importing each other.
const config = readConfig();

function readConfig() {
  try {
    const data = JSON.parse(document.getElementById("coursegen-review")?.textContent ?? "null");
    return data && typeof data.modules === "object" ? data : null;
  } catch {
    return null;
  }
}

const load = (name) => import(new URL(config.modules[name], document.baseURI).href);

/** Return a new element with attributes, properties (keys starting with ".") and text or nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith(".")) node[key.slice(1)] = value;
    else if (value !== false && value != null) node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

async function start({ course, page }) {
  const progress = await load("progress.js");
  const store = progress.openStore(course);
  if (page) store.visit(page);
  const marks = await load("review/marks.js");
  marks.markUnits(document, store.data);
  marks.showDue(document.querySelector("[data-due]"), store.due(new Date()), el);
  const questions = [...document.querySelectorAll("[data-question]")];
  if (questions.length) await enhanceQuestions(questions, store, page);
  document.documentElement.dataset.review = "ready"; // for tests and styles: enhancement is done
}

async function enhanceQuestions(questions, store, page) {
  const [schedule, recall, choice, tally, transfer, exercise] = await Promise.all(
    ["review/schedule.js", "review/recall.js", "review/choice.js", "review/tally.js",
      "review/transfer.js", "review/exercise.js"].map(load));
  // The FSRS library is the largest module: fetch it at the first score, not with the page.
  let scheduler = null;
  const getScheduler = async () => (scheduler ??= schedule.makeScheduler(await load("vendor/ts-fsrs.js")));
  const announcer = el("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  document.body.append(announcer);
  const section = document.querySelector("[data-tally]");
  const refresh = () => {
    if (section) tally.update(section, questions, (q) => store.record(keyOf(q)), el);
    store.markReview(page, questions.every((q) => store.record(keyOf(q)).score));
  };
  const ctx = {
    el, store, seed: store.data.seed, keyOf, dueText: schedule.dueText, nextText: schedule.nextText,
    scoreGroup: recall.scoreGroup,
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
    loadEditor: () => load("vendor/codemirror.js"),  // the exercises' code editor, fetched on first use
  };
  for (const q of questions) {  // warm the scheduler up as soon as a learner starts on a question
    for (const type of ["focusin", "pointerdown"]) q.addEventListener(type, getScheduler, { once: true });
  }
  const kinds = { choice, exercise };
  const views = questions.map((q) => (kinds[q.dataset.kind] ?? recall).enhance(q, ctx));
  if (section) {
    transfer.mount(section, { ...ctx, reset: () => views.forEach((v) => v.reset()),
      reload: () => views.forEach((v) => v.restore()) });
  }
  refresh();
}

function keyOf(question) {
  return `${config.page}/${question.dataset.question}`;
}

function promptOf(question) {
  const prompt = question.querySelector(".question-prompt");
  const paragraph = [...prompt.querySelectorAll(":scope > p")].at(-1) ?? prompt;
  return paragraph.textContent.trim().replace(/\s+/g, " ").slice(0, 200);
}

if (config) start(config);
