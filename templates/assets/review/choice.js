// Multiple choice: options in a per-learner stable shuffled order; choosing one locks the question,
// marks it right or wrong, shows the explanations and scores itself (right = yes, wrong = no).
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { dueText, nextText } from "coursegen/review/schedule.js";

/** Return a 32-bit FNV-1a hash of a string. */
export function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Return the items in an order fixed by `seed`: the same learner always sees the same order. */
export function stableShuffle(items, seed) {
  return items.map((item, i) => [hash(`${seed}:${i}`), i, item])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , item]) => item);
}

/** Enhance one choice question; return { reset } for the tally's reset button. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const list = question.querySelector("[data-options]");
  const answer = question.querySelector("[data-answer]");
  const body = answer.querySelector(".question-answer-body");
  body.tabIndex = -1;
  const correct = Number(answer.querySelector("[data-feedback][data-correct]").dataset.feedback);
  const items = stableShuffle([...list.querySelectorAll(":scope > li[data-option]")], `${ctx.seed}:${key}`);
  list.append(...items);
  const buttons = items.map((item) => optionButton(item));
  const verdicts = items.map((item) => item.appendChild(h("span", { class: "choice-verdict-mark" })));
  const again = h("button", { type: "button", class: "question-again" }, t("recall.again"));
  const next = h("p", { class: "question-next" });
  answer.after(h("div", { class: "question-score" }, next, again));

  const show = () => {
    const chosen = store.record(key).choice;
    const locked = Number.isInteger(chosen);
    answer.hidden = !locked;
    answer.open = locked;
    again.hidden = !locked;
    next.textContent = locked ? nextText(store.record(key).card, new Date()) : "";
    items.forEach((item, i) => markOption(item, buttons[i], verdicts[i], locked ? chosen : null, correct));
    for (const note of answer.querySelectorAll("[data-feedback]")) {
      note.classList.toggle("is-chosen", locked && Number(note.dataset.feedback) === chosen);
    }
  };
  buttons.forEach((button) => button.addEventListener("click", async () => {
    const chosen = Number(button.dataset.choose);
    store.update(key, { choice: chosen });
    const scheduled = ctx.score(question, chosen === correct ? "yes" : "no");
    show();
    body.focus();
    const card = await scheduled;
    show(); // again, now with the next-review date
    const verdict = chosen === correct ? t("choice.correct") : t("choice.wrong");
    ctx.announce(`${verdict} ${t("schedule.next", { when: dueText(card.due, new Date()) })}`);
  }));
  again.addEventListener("click", () => {
    store.update(key, { choice: undefined, score: undefined });
    show();
    ctx.changed();
    buttons[0].focus();
  });
  show();
  return { restore: show, reset() { store.clear(key); show(); } };
}

/** Turn an option's content into one button (an option that is a single paragraph loses the <p>). */
export function optionButton(item) {
  const button = h("button", { type: "button", class: "choice-option", "data-choose": item.dataset.option });
  const content = item.children.length === 1 && item.firstElementChild.tagName === "P" ? item.firstElementChild : item;
  button.append(...content.childNodes);
  item.replaceChildren(button);
  return button;
}

/** Show an option as chosen, right or wrong once the question is locked (chosen is null before). */
function markOption(item, button, verdict, chosen, correct) {
  const n = Number(item.dataset.option);
  const locked = chosen !== null;
  item.classList.toggle("is-chosen", locked && n === chosen);
  item.classList.toggle("is-right", locked && n === correct);
  item.classList.toggle("is-wrong", locked && n === chosen && n !== correct);
  button.disabled = locked;
  button.setAttribute("aria-pressed", String(locked && n === chosen));
  const text = !locked ? "" : n === correct ? t("choice.right_option") : n === chosen ? t("choice.your_wrong_option") : "";
  verdict.textContent = text && ` ${text}`;
}
