// Numeric answers: the learner types a number (1e-3, 1.5 × 10^3, 0,001 where the course's language writes a
// decimal comma, an optional unit the author listed), "Check my answer" compares it with the number the build
// computed (within the question's tolerance: yes; within its wider `close` margin: partly; else no), then the
// question locks and shows the answer. A question with variants shows one variant's numbers per visit: the
// one checked is kept with the answer, and the next spaced review draws another.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { hash } from "coursegen/review/choice.js";
import { dueText, nextText } from "coursegen/review/schedule.js";

const SUPERSCRIPTS = { "⁻": "-", "⁺": "+", "⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6",
  "⁷": "7", "⁸": "8", "⁹": "9" };
const NUMBER = /^([-+]?\d[\d\s.,']*(?:[eE][-+]?\d+)?)(?:\s*[×x·*]\s*10\s*\^\s*([-+]?\d+))?\s*(.*)$/;
const VERDICTS = { yes: "numeric.right", partly: "numeric.close", no: "numeric.wrong" };

/** Return { value, unit } for what the learner typed, or { error: "number" } when no number can be read.
 * `decimalMark` is the course language's ("," or "."); a point is read as a decimal point in either. */
export function readAnswer(typed, decimalMark) {
  const text = typed.trim().replace(/\u2212/g, "-").replace(/[\u00a0\u202f\u2009]/g, " ")
    .replace(/[⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹]+/g, (run) => `^${[...run].map((c) => SUPERSCRIPTS[c]).join("")}`);
  const match = NUMBER.exec(text);
  if (!match) return { error: "number" };
  const mantissa = plainDigits(match[1].trim(), decimalMark);
  if (mantissa === null) return { error: "number" };
  const value = Number(match[2] === undefined ? mantissa : `${mantissa}e${match[2]}`);
  return Number.isFinite(value) ? { value, unit: match[3].trim() } : { error: "number" };
}

/** Return the number's digits in JavaScript's notation (no grouping, "." for decimals), or null. */
function plainDigits(text, decimalMark) {
  const [body, exponent = ""] = text.split(/(?=[eE])/);
  let digits = body.replace(/[\s']/g, "");
  if (decimalMark === ",") {
    if (digits.includes(",")) digits = digits.replace(/\./g, "").replace(",", ".");  // 1.234,5: points group
  } else if (digits.includes(",")) {
    if (!/^[-+]?[1-9]\d{0,2}(,\d{3})+(\.\d*)?$/.test(digits)) return null;  // 0,5 here is no number: 1,024 is
    digits = digits.replace(/,/g, "");
  }
  return /^[-+]?(\d+\.?\d*|\.\d+)$/.test(digits) ? digits + exponent : null;
}

/** Return the score of a value against a variant: "yes" within its limit, "partly" within `close`, else "no". */
export function scoreOf(value, variant) {
  const off = Math.abs(value - variant.answer);
  const slack = 1e-9 * Math.max(Math.abs(variant.answer), variant.limit);  // the float nearest a decimal limit
  if (off <= variant.limit + slack) return "yes";
  return variant.close !== undefined && off <= variant.close + slack ? "partly" : "no";
}

/** Return the variant index to show: the one kept with the answer, or one drawn from the learner's seed and
 * the number of reviews so far (each spaced review a new one). */
export function variantOf(record, count, seed) {
  if (Number.isInteger(record.variant) && record.variant < count) return record.variant;
  return (hash(seed) + (record.card?.reps ?? 0)) % count;
}

/** Enhance one numeric question; return { restore, reset } for the tally's buttons. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const data = JSON.parse(question.querySelector("[data-numeric]").textContent);
  const answer = question.querySelector("[data-answer]");
  const body = answer.querySelector(".question-answer-body");
  body.tabIndex = -1;
  const id = question.id;
  const units = data.units;
  const input = h("input", { type: "text", id: `${id}-number`, class: "numeric-input", inputmode: "decimal",
    autocomplete: "off", spellcheck: "false", "aria-describedby": `${id}-lock ${id}-status` });
  const check = h("button", { type: "button", class: "question-reveal", "aria-describedby": `${id}-lock` },
    t("numeric.check"));
  const lock = h("p", { class: "question-lock", id: `${id}-lock` }, t("numeric.lock"));
  const status = h("p", { class: "numeric-status", id: `${id}-status` });
  const label = units.length ? t("numeric.your_answer_in", { unit: units[0] }) : t("numeric.your_answer");
  const result = h("p", { class: "numeric-result" });
  const next = h("p", { class: "question-next" });
  const again = h("button", { type: "button", class: "question-again" }, t("recall.again"));
  answer.before(h("div", { class: "question-commit" }, h("label", { for: input.id }, label),
    h("div", { class: "numeric-row" }, input, check), lock, status));
  answer.after(h("div", { class: "question-score" }, result, next, again));
  const expected = answer.querySelector("[data-numeric-expected]");
  let shown = 0;

  const variant = () => data.variants[shown];
  const showVariant = () => {
    shown = variantOf(store.record(key), data.variants.length, `${ctx.seed}:${key}`);
    for (const node of question.querySelectorAll("[data-var]")) {
      node.textContent = variant().vars[node.dataset.var] ?? node.textContent;
    }
    expected.textContent = t("numeric.expected", { answer: variant().shown, tolerance: variant().limit_text });
  };
  const sync = () => {
    const record = store.record(key);
    const checked = record.revealed === true && Boolean(record.score);
    showVariant();
    answer.hidden = !checked;
    answer.open = checked;
    input.readOnly = checked;
    check.hidden = lock.hidden = checked;
    check.disabled = checked || !input.value.trim();
    again.hidden = !checked;
    result.textContent = checked ? t(VERDICTS[record.score], { answer: variant().shown }) : "";
    result.className = `numeric-result${checked ? ` is-${record.score}` : ""}`;
    next.textContent = checked ? nextText(record.card, new Date()) : "";
  };
  const unreadable = () => {
    const read = readAnswer(input.value, t("numeric.decimal_mark"));
    if (read.error) {
      const example = t("numeric.decimal_mark") === "," ? "0,001 / 1e-3" : "0.001 / 1e-3";
      return { message: t("numeric.unreadable", { text: input.value.trim(), example }) };
    }
    if (read.unit && !units.includes(read.unit) && !units.some((u) => u.toLowerCase() === read.unit.toLowerCase())) {
      return { message: t("numeric.unknown_unit", { unit: read.unit, units: units.join(", ") || "—" }) };
    }
    return read;
  };
  const submit = async () => {
    if (!input.value.trim() || store.record(key).score) return;
    const read = unreadable();
    status.textContent = read.message ?? "";
    if (read.message) { input.setAttribute("aria-invalid", "true"); input.focus(); return; }
    input.removeAttribute("aria-invalid");
    const score = scoreOf(read.value, variant());
    store.update(key, { text: input.value.trim(), variant: shown, revealed: true });
    const scheduled = ctx.score(question, score);
    sync();
    body.focus();
    const card = await scheduled;
    sync(); // again, now with the next-review date
    ctx.announce(`${t(VERDICTS[score], { answer: variant().shown })} ${t("schedule.next", { when: dueText(card.due, new Date()) })}`);
  };
  input.addEventListener("input", () => { status.textContent = ""; input.removeAttribute("aria-invalid"); sync(); });
  input.addEventListener("keydown", (event) => { if (event.key === "Enter") { event.preventDefault(); submit(); } });
  check.addEventListener("click", submit);
  again.addEventListener("click", () => {
    store.update(key, { text: undefined, revealed: undefined, score: undefined });
    input.value = "";
    sync();
    ctx.changed();
    input.focus();
  });
  const restore = () => {
    input.value = store.record(key).text ?? "";
    sync();
  };
  restore();
  return { restore, reset() { store.clear(key); restore(); } };
}
