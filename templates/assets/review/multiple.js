// Select all that apply: a choice with several right options. Options toggle (aria-pressed) in the learner's
// stable shuffled order; "Check my choices" commits them, then the question locks, marks every option,
// opens the explanations and scores itself: exactly the right set = yes, some right = partly, none = no.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { optionButton, stableShuffle } from "coursegen/review/choice.js";
import { dueText, nextText } from "coursegen/review/schedule.js";

/** Return the score of a set of chosen options against the right ones: "yes", "partly" or "no". */
export function scoreOf(chosen, correct) {
  const hits = chosen.filter((n) => correct.includes(n)).length;
  if (hits === correct.length && chosen.length === correct.length) return "yes";
  return hits ? "partly" : "no";
}

const VERDICTS = { yes: "choice.all_right", partly: "choice.partly_right", no: "choice.none_right" };

/** Enhance one select-all question; return { restore, reset } for the tally's buttons. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const list = question.querySelector("[data-options]");
  const answer = question.querySelector("[data-answer]");
  const body = answer.querySelector(".question-answer-body");
  body.tabIndex = -1;
  const correct = [...answer.querySelectorAll("[data-feedback][data-correct]")].map((n) => Number(n.dataset.feedback));
  const items = stableShuffle([...list.querySelectorAll(":scope > li[data-option]")], `${ctx.seed}:${key}`);
  list.append(...items);
  const buttons = items.map((item) => toggleButton(item));
  const verdicts = items.map((item) => item.appendChild(h("span", { class: "choice-verdict-mark" })));
  const check = h("button", { type: "button", class: "question-reveal choice-check", "aria-describedby": `${question.id}-lock` },
    t("choice.check"));
  const lock = h("p", { class: "question-lock", id: `${question.id}-lock` }, t("choice.lock"));
  const result = h("p", { class: "choice-result" });
  const again = h("button", { type: "button", class: "question-again" }, t("recall.again"));
  const next = h("p", { class: "question-next" });
  list.after(h("div", { class: "question-commit" }, check, lock));
  answer.after(h("div", { class: "question-score" }, result, next, again));

  const picked = () => buttons.filter((b) => b.getAttribute("aria-pressed") === "true").map((b) => Number(b.dataset.choose));
  const show = () => {
    const record = store.record(key);
    const chosen = Array.isArray(record.choices) ? record.choices : null;
    const locked = chosen !== null;
    answer.hidden = !locked;
    answer.open = locked;
    check.hidden = lock.hidden = locked;
    check.disabled = !locked && !picked().length;
    again.hidden = !locked;
    result.textContent = locked && record.score ? t(VERDICTS[record.score]) : "";
    result.className = `choice-result${locked && record.score ? ` is-${record.score}` : ""}`;
    next.textContent = locked ? nextText(record.card, new Date()) : "";
    items.forEach((item, i) => markOption(item, buttons[i], verdicts[i], chosen, correct));
    for (const note of answer.querySelectorAll("[data-feedback]")) {
      note.classList.toggle("is-chosen", locked && chosen.includes(Number(note.dataset.feedback)));
    }
  };
  for (const button of buttons) {
    button.addEventListener("click", () => {
      if (store.record(key).choices) return;
      button.setAttribute("aria-pressed", String(button.getAttribute("aria-pressed") !== "true"));
      show();
    });
  }
  check.addEventListener("click", async () => {
    const chosen = picked().sort((a, b) => a - b);
    if (!chosen.length) return;
    const score = scoreOf(chosen, correct);
    store.update(key, { choices: chosen });
    const scheduled = ctx.score(question, score);
    show();
    body.focus();
    const card = await scheduled;
    show(); // again, now with the next-review date
    ctx.announce(`${t(VERDICTS[score])} ${t("schedule.next", { when: dueText(card.due, new Date()) })}`);
  });
  again.addEventListener("click", () => {
    store.update(key, { choices: undefined, score: undefined });
    for (const button of buttons) button.setAttribute("aria-pressed", "false");
    show();
    ctx.changed();
    buttons[0].focus();
  });
  show();
  const restore = () => {
    const chosen = store.record(key).choices ?? [];
    for (const button of buttons) button.setAttribute("aria-pressed", String(chosen.includes(Number(button.dataset.choose))));
    show();
  };
  restore();
  return { restore, reset() { store.clear(key); restore(); } };
}

/** Turn an option's content into one toggle button (an option that is a single paragraph loses the <p>). */
function toggleButton(item) {
  const button = optionButton(item);
  button.setAttribute("aria-pressed", "false");
  return button;
}

/** Show an option as chosen, right, missed or wrong once the question is locked (`chosen` is null before). */
function markOption(item, button, verdict, chosen, correct) {
  const n = Number(item.dataset.option);
  const locked = chosen !== null;
  const isChosen = locked ? chosen.includes(n) : button.getAttribute("aria-pressed") === "true";
  const isRight = correct.includes(n);
  item.classList.toggle("is-chosen", isChosen);
  item.classList.toggle("is-right", locked && isRight);
  item.classList.toggle("is-wrong", locked && isChosen && !isRight);
  button.disabled = locked;
  if (locked) button.setAttribute("aria-pressed", String(isChosen));
  const text = !locked ? "" : isRight ? t(isChosen ? "choice.your_right_option" : "choice.missed_option")
    : isChosen ? t("choice.your_wrong_option") : "";
  verdict.textContent = text && ` ${text}`;
}
