// Recall, explain and excerpt questions: commit an answer (typed, or "on paper / aloud"), then the
// model answer unlocks, then an honest self-score: yes, partly or no.
import { SCORE_LABELS } from "coursegen/constants.js";
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { dueText, nextText } from "coursegen/review/schedule.js";

/** Enhance one question element; return { restore, reset } for the tally's buttons. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const answer = question.querySelector("[data-answer]");
  const body = answer.querySelector(".question-answer-body");
  body.tabIndex = -1;
  const { node, text, aloud, reveal, lock } = commitControls(question, ctx);
  const scores = scoreGroup(question, ctx, { again() {
    store.update(key, { text: "", aloud: false, revealed: false, score: undefined });
    text.value = "";
    aloud.checked = false;
    text.focus();
  } });
  answer.before(node);
  answer.after(scores.node);

  const committed = () => text.value.trim() !== "" || aloud.checked;
  const sync = () => {
    const revealed = store.record(key).revealed === true;
    reveal.disabled = !committed() || revealed;
    reveal.hidden = lock.hidden = answer.open = text.readOnly = aloud.disabled = revealed;
    answer.hidden = !revealed;
    scores.show(store.record(key));
  };
  text.addEventListener("input", () => { store.update(key, { text: text.value }); sync(); });
  aloud.addEventListener("change", () => { store.update(key, { aloud: aloud.checked }); sync(); });
  reveal.addEventListener("click", () => {
    if (!committed()) return;
    store.update(key, { revealed: true });
    sync();
    body.focus();
    ctx.announce(t("recall.shown"));
  });
  scores.onScore = sync;
  const restore = () => {
    text.value = store.record(key).text ?? "";
    aloud.checked = store.record(key).aloud === true;
    sync();
  };
  restore();
  return { restore, reset() { store.clear(key); restore(); } };
}

/** Return the commit step: a text box, the "on paper or aloud" tick, a timer, the reveal button. */
function commitControls(question, ctx) {
  const id = question.id;
  const text = h("textarea", { id: `${id}-text`, rows: 3, class: "question-text", "aria-describedby": `${id}-lock` });
  const aloud = h("input", { type: "checkbox", id: `${id}-aloud` });
  const reveal = h("button", { type: "button", class: "question-reveal", "aria-describedby": `${id}-lock` },
    t("recall.reveal"));
  const lock = h("p", { class: "question-lock", id: `${id}-lock` },
    t("recall.lock"));
  const node = h("div", { class: "question-commit" },
    h("label", { for: text.id }, t("recall.your_answer")), text,
    h("label", { class: "question-aloud", for: aloud.id }, aloud, " ", t("recall.aloud")),
    timer(question, ctx), reveal, lock);
  return { node, text, aloud, reveal, lock };
}

/** Return the yes / partly / no buttons, the next-review line and "Answer again" (which runs `again()` and then
 * refreshes); `label` is the group's visible question. Exercises use it too. */
export function scoreGroup(question, ctx, { again: restart, label = t("recall.did_you") }) {
  const buttons = Object.entries(SCORE_LABELS).map(([value, label]) =>
    h("button", { type: "button", class: `score-${value}`, "data-score": value, "aria-pressed": "false" }, label));
  const next = h("p", { class: "question-next" });
  const again = h("button", { type: "button", class: "question-again" }, t("recall.again"));
  const node = h("div", { class: "question-score", role: "group", "aria-label": t("recall.did_you") },
    h("p", { class: "question-score-label" }, label), ...buttons, next, again);
  const group = {
    node,
    onScore: () => {},
    show(record) {
      node.hidden = record.revealed !== true;
      for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.score === record.score));
      next.textContent = record.score ? nextText(record.card, new Date()) : "";
      again.hidden = !record.score;
    },
  };
  for (const button of buttons) {
    button.addEventListener("click", async () => {
      const scheduled = ctx.score(question, button.dataset.score);
      group.onScore();
      const card = await scheduled;
      group.onScore(); // again, now with the next-review date
      ctx.announce(t("recall.scored", { score: SCORE_LABELS[button.dataset.score].toLowerCase(), when: dueText(card.due, new Date()) }));
    });
  }
  again.addEventListener("click", () => {
    restart();
    group.onScore();
    ctx.changed();
  });
  return group;
}

function timer(question, ctx) {
  const seconds = Number(question.dataset.seconds);
  if (!seconds) return "";
  const clock = h("span", { class: "question-timer", "aria-hidden": "true" });
  const button = h("button", { type: "button", class: "question-timer-start" }, t("recall.timer", { seconds }));
  let left = 0;
  let handle = 0;
  button.addEventListener("click", () => {
    clearInterval(handle);
    left = seconds;
    clock.textContent = `${left} s`;
    ctx.announce(t("recall.timer_started", { seconds }));
    handle = setInterval(() => {
      left -= 1;
      clock.textContent = left > 0 ? t("recall.seconds_left", { seconds: left }) : t("recall.time");
      if (left <= 0) { clearInterval(handle); ctx.announce(t("recall.time_up")); }
    }, 1000);
  });
  return h("span", { class: "question-timer-group" }, button, " ", clock);
}
