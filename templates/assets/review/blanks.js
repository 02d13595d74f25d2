// Fill in the blanks: the gaps are text boxes in the page (they take typing without JavaScript too).
// "Check the blanks" is the commit: each gap is marked right or not, the answer key unlocks, and the
// check scores it (all right = yes, some = partly, none = no), which the learner may change.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { scoreGroup } from "coursegen/review/recall.js";
import { dueText } from "coursegen/review/schedule.js";

/** Return an answer as the author's rules compare it: case folded or not, spaces collapsed, kept or dropped. */
export function normalize(text, { case: letterCase, spaces }) {
  let out = spaces === "exact" ? text : spaces === "ignore" ? text.replace(/\s+/g, "") : text.trim().replace(/\s+/g, " ");
  if (letterCase === "insensitive") out = out.toLowerCase();  // not the locale's rules: the same answer scores the same everywhere
  return out.normalize("NFC");
}

/** Return, per gap, whether the learner's text is one of its accepted answers. */
export function marks(texts, spec) {
  return spec.answers.map((accepted, i) =>
    accepted.some((answer) => normalize(answer, spec) === normalize(texts[i] ?? "", spec)));
}

/** Return the score of a set of marks: all right = yes, some = partly, none = no. */
export function scoreOf(results) {
  const right = results.filter(Boolean).length;
  return right === results.length ? "yes" : right > 0 ? "partly" : "no";
}

/** Enhance one fill-in-the-blanks question; return { restore, reset } for the tally's buttons. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const spec = JSON.parse(question.querySelector("[data-blanks]").textContent);
  const inputs = [...question.querySelectorAll("input[data-blank]")];
  const answer = question.querySelector("[data-answer]");
  answer.querySelector(".question-answer-body").tabIndex = -1;
  const id = question.id;
  const check = h("button", { type: "button", class: "blanks-check", "aria-describedby": `${id}-lock` }, t("blanks.check"));
  const lock = h("p", { class: "question-lock", id: `${id}-lock` },
    t("blanks.lock"), spec.case === "sensitive" ? ` ${t("blanks.case")}` : "");
  const verdicts = inputs.map((input) => {
    const mark = h("span", { class: "blanks-mark", id: `${input.id}-mark` });
    input.after(mark);
    input.setAttribute("aria-describedby", mark.id);
    return mark;
  });
  answer.before(h("div", { class: "question-commit blanks-commit" }, check, lock));
  const scores = scoreGroup(question, ctx, {
    label: t("check.scored_label"),
    again() {
      store.update(key, { blanks: undefined, revealed: false, score: undefined });
      inputs.forEach((input) => { input.value = ""; });
      inputs[0].focus();
    },
  });
  answer.after(scores.node);

  const typed = () => inputs.map((input) => input.value);
  const sync = () => {
    const record = store.record(key);
    const checked = record.revealed === true;
    const results = checked ? marks(typed(), spec) : [];
    inputs.forEach((input, i) => {
      input.readOnly = checked;
      input.classList.toggle("is-right", checked && results[i]);
      input.classList.toggle("is-wrong", checked && !results[i]);
      verdicts[i].replaceChildren(...(checked ? [` ${results[i] ? "✓" : "✗"} `,
        h("span", { class: "blanks-mark-word" }, results[i] ? t("blanks.right") : t("blanks.wrong"))] : []));
    });
    check.disabled = checked || typed().every((text) => !text.trim());
    check.hidden = lock.hidden = checked;
    answer.hidden = !checked;
    answer.open = checked;
    scores.show(record);
  };
  for (const input of inputs) {
    input.addEventListener("input", () => { store.update(key, { blanks: typed() }); sync(); });
    input.addEventListener("keydown", (event) => { if (event.key === "Enter" && !check.disabled) check.click(); });
  }
  check.addEventListener("click", async () => {
    const results = marks(typed(), spec);
    store.update(key, { blanks: typed(), revealed: true });
    const scheduled = ctx.score(question, scoreOf(results));
    sync();
    answer.querySelector(".question-answer-body").focus();
    const card = await scheduled;
    sync();
    ctx.announce(t("blanks.checked", { right: results.filter(Boolean).length, total: results.length,
      when: dueText(card.due, new Date()) }));
  });
  scores.onScore = sync;
  const restore = () => {
    const saved = store.record(key).blanks ?? [];
    inputs.forEach((input, i) => { input.value = saved[i] ?? ""; });
    sync();
  };
  restore();
  return { restore, reset() { store.clear(key); restore(); } };
}
