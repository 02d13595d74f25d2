// Exercises: the learner writes Python in a text box; Run executes it, Check runs the baked cases in
// Pyodide (the widgets' worker through python-client.js, sent the page's check harness as a `run` entry). Check is the commit:
// the reference solution unlocks, and the checks score it (all pass = yes, some = partly, none = no),
// which the learner may change. A run that takes longer than RUN_LIMIT_MS ends its worker; the next
// run starts a fresh one, which gets the runtime's files from the page instead of downloading them again.
// The code editor (vendored CodeMirror) loads when the learner starts on the code.
// Without Python (a site whose Pyodide copy lacks a package the exercise needs, said before any run, or a
// runtime that fails to load) the learner can still unlock the reference, compare, and score themselves.
// Why Python failed is said as widgets say it (python-failure.js): one plain sentence, and the technical
// reason in a "Technical reason" disclosure.
import { SCORE_LABELS } from "coursegen/constants.js";
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { PythonClient } from "coursegen/python-client.js";
import { failureText, reasonDisclosure, showReason, technicalReason } from "coursegen/python-failure.js";
import { scoreGroup } from "coursegen/review/recall.js";
import { dueText } from "coursegen/review/schedule.js";

const RUN_LIMIT_MS = 5000;
const BOOT_LIMIT_MS = 90000;  // the whole boot, every stage together
const CHECKED_LABEL = t("exercise.checked_label");
const SELF_LABEL = t("exercise.self_label");
const INDENT = "    ";

// The page's exercises share one worker, booted with the packages any of them needs (except those whose
// packages this site lacks: they cannot run, and should not stop the others).
const pagePackages = new Set();
let shared = null;
const pythonFor = (spec) => (shared ??= new PythonClient(spec.runtime, () => [...pagePackages].sort(),
  { boot: BOOT_LIMIT_MS, run: RUN_LIMIT_MS }));

/** One plain sentence saying why Python could not run the learner's code (a run that took too long is said apart). */
function unavailableText(error, runtime) {
  return error.restarted ? t("exercise.restarted") : failureText(error, runtime);
}

/** Enhance one exercise; return { restore, reset } for the tally's buttons. */
export function enhance(question, ctx) {
  const { store } = ctx;
  const key = ctx.keyOf(question);
  const spec = JSON.parse(question.querySelector("[data-exercise-checks]").textContent);
  const lacking = Object.keys(spec.missing ?? {});
  if (!lacking.length) for (const name of spec.packages) pagePackages.add(name);
  const starterBox = question.querySelector("[data-exercise-starter]");
  const code = starterBox.querySelector("textarea");  // the page's own text box, holding the starter
  const starter = code.defaultValue;
  const answer = question.querySelector("[data-answer]");
  const id = question.id;
  code.setAttribute("aria-describedby", `${id}-keys`);
  const keys = h("p", { class: "exercise-keys", id: `${id}-keys` },
    t("exercise.keys"));
  const run = h("button", { type: "button", class: "exercise-run" }, t("exercise.run"));
  const check = h("button", { type: "button", class: "exercise-check" }, t("exercise.check"));
  const restart = h("button", { type: "button", class: "exercise-restart" }, t("exercise.restart"));
  const status = h("p", { class: "exercise-status", role: "status", "aria-live": "polite" });
  const reason = reasonDisclosure();
  const output = h("pre", { class: "exercise-output", hidden: true });
  const results = h("ul", { class: "exercise-results", hidden: true });
  const compare = h("button", { type: "button", class: "exercise-compare", hidden: true },
    t("exercise.compare"));
  starterBox.after(h("div", { class: "exercise-editor" },
    keys, h("div", { class: "exercise-buttons" }, run, check, restart), status, reason, compare, output, results));
  const scores = scoreGroup(question, ctx, {
    label: CHECKED_LABEL,
    again() { store.update(key, { revealed: false, score: undefined, self: undefined }); focusCode(); },
  });
  const scoreLabel = scores.node.querySelector(".question-score-label");
  answer.after(scores.node);
  answer.querySelector(".question-answer-body").tabIndex = -1;
  revealHintsInTurn(question);
  editorKeys(code);
  // The text box stays the value's home; the editor, loaded when the learner starts on it, mirrors it.
  let editor = null;
  const setCode = (text) => {
    code.value = text;
    if (editor && editor.state.doc.toString() !== text) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
    }
  };
  const focusCode = () => (editor ?? code).focus();
  let upgrading = false;
  const upgrade = async () => {
    if (upgrading) return;
    upgrading = true;
    try {
      const { createEditor } = await import("coursegen/vendor/codemirror.js");
      const { selectionStart, selectionEnd } = code;
      const hadFocus = document.activeElement === code;
      editor = createEditor(code, { onChange(text) { code.value = text; code.dispatchEvent(new Event("input")); } });
      editor.dispatch({ selection: { anchor: selectionStart, head: selectionEnd } });
      if (hadFocus) editor.focus();
    } catch {
      // the enhanced text box keeps working
    }
  };
  for (const type of ["focus", "keydown"]) code.addEventListener(type, upgrade, { once: true });

  const sync = () => {
    const record = store.record(key);
    answer.hidden = record.revealed !== true;
    compare.hidden = compare.dataset.offered !== "true" || record.revealed === true;
    scoreLabel.textContent = record.self ? SELF_LABEL : CHECKED_LABEL;
    scores.show(record);
  };
  /** Python cannot check this code here: say why, and offer the reference and a self-score instead. */
  const offerSelfScore = (sentence) => {
    status.textContent = t("exercise.self_score", { sentence });
    compare.dataset.offered = "true";
    sync();
  };
  compare.addEventListener("click", () => {
    store.update(key, { code: code.value, revealed: true, self: true });
    sync();
    answer.open = true;
    answer.querySelector(".question-answer-body").focus();
    ctx.announce(t("exercise.reference_shown"));
  });
  if (lacking.length) {  // known at build time: no Run or Check that can only fail
    run.hidden = check.hidden = true;
    const packages = new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" });
    offerSelfScore(t("exercise.not_on_this_site", { packages: packages.format(lacking) }));
  }
  code.addEventListener("input", () => store.update(key, { code: code.value }));
  restart.addEventListener("click", () => { setCode(starter); store.update(key, { code: starter }); focusCode(); });

  const execute = async (mode) => {
    run.disabled = check.disabled = true;
    reason.hidden = true;
    status.textContent = mode === "check" ? t("exercise.checking") : t("exercise.running");
    const loading = setTimeout(() => { status.textContent = t("exercise.loading"); }, 400);
    const python = pythonFor(spec);
    const stalled = ({ detail }) => { status.textContent = t("exercise.not_arriving", { seconds: detail.seconds }); };
    python.addEventListener("stall", stalled);  // the runtime is not arriving: say so long before the boot's limit
    try {
      return await python.run(spec.harness, { code: code.value, function: spec.function, cases: spec.cases,
        tolerance: spec.tolerance, mode });
    } catch (error) {
      output.hidden = results.hidden = true;
      if (error.stage === "timeout" && !error.during && !error.restarted) {
        status.textContent = t("exercise.stopped", { seconds: RUN_LIMIT_MS / 1000 });
      } else {
        offerSelfScore(t("exercise.unavailable", { reason: unavailableText(error, spec.runtime) }));
        showReason(reason, technicalReason(error, spec.runtime), id);
      }
      return null;
    } finally {
      clearTimeout(loading);
      python.removeEventListener("stall", stalled);
      run.disabled = check.disabled = false;
    }
  };
  const showOutput = (report) => {
    output.textContent = report.output ?? "";
    output.hidden = !report.output;
  };
  run.addEventListener("click", async () => {
    const report = await execute("run");
    if (!report) return;
    showOutput(report);
    results.hidden = true;
    status.textContent = report.error ? t("exercise.python_error", { error: report.error }) : t("exercise.ran");
  });
  check.addEventListener("click", async () => {
    const report = await execute("check");
    if (!report) return;
    showOutput(report);
    if (report.error) {  // the checks could not even start: not a commit, fix and check again
      results.hidden = true;
      status.textContent = t("exercise.python_error", { error: report.error });
      return;
    }
    const passed = report.results.filter((r) => r.passed).length;
    showResults(results, report.results);
    const score = passed === report.results.length ? "yes" : passed > 0 ? "partly" : "no";
    store.update(key, { code: code.value, revealed: true, self: undefined });
    const scheduled = ctx.score(question, score);
    sync();
    const summary = t("exercise.summary", { passed, total: report.results.length,
      score: SCORE_LABELS[score].toLocaleLowerCase(document.documentElement.lang || "en") });
    status.textContent = t("exercise.unlocked", { summary });
    const card = await scheduled;
    sync();
    ctx.announce(`${summary} ${t("schedule.next", { when: dueText(card.due, new Date()) })}`);
  });
  scores.onScore = sync;
  const restore = () => {
    setCode(store.record(key).code ?? starter);
    sync();
  };
  restore();
  return { restore, reset() { store.clear(key); results.hidden = output.hidden = true; status.textContent = ""; restore(); } };
}

/** List each check: passed, or failed with its input and expected against actual (or the error). */
function showResults(list, results) {
  const text = (value) => JSON.stringify(value).slice(0, 300);
  const firstFailure = results.findIndex((r) => !r.passed);
  list.replaceChildren(...results.map((r, i) => {
    const item = h("li", { class: r.passed ? "exercise-pass" : "exercise-fail" },
      h("strong", {}, r.passed ? t("exercise.passed") : t("exercise.failed")), " ", r.name);
    if (i === firstFailure) {
      item.append(h("br"), t("exercise.input", { input: text(r.args) }), h("br"),
        r.error ? t("exercise.error", { error: r.error })
          : t("exercise.expected", { expected: text(r.expected), actual: text(r.actual) }));
    }
    return item;
  }));
  list.hidden = false;
}

/** Show hint n + 1 only once hint n has been opened. */
function revealHintsInTurn(question) {
  const hints = [...question.querySelectorAll("[data-hint]")];
  hints.forEach((hint, i) => {
    hint.querySelector("summary").textContent = t("exercise.hint", { number: i + 1, total: hints.length });
    hint.hidden = i > 0;
    hint.addEventListener("toggle", () => { if (hint.open && hints[i + 1]) hints[i + 1].hidden = false; });
  });
}

/** Tab indents (Shift+Tab dedents) the current line or selected lines; Esc lets the next Tab leave the box. */
function editorKeys(box) {
  let leaving = false;
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { leaving = true; return; }
    if (event.key === "Shift") return;  // Esc, then Shift+Tab leaves backwards
    if (event.key !== "Tab" || leaving || event.ctrlKey || event.altKey || event.metaKey) {
      leaving = false;  // the browser moves the focus on this Tab, or the key is not Tab
      return;
    }
    event.preventDefault();
    const { value, selectionStart: start, selectionEnd: end } = box;
    const lineStart = value.lastIndexOf("\n", start - 1) + 1;
    if (!event.shiftKey && start === end) {
      box.setRangeText(INDENT, start, end, "end");
    } else {
      const block = value.slice(lineStart, end);
      const changed = event.shiftKey ? block.replace(/^ {1,4}/gm, "") : block.replace(/^/gm, INDENT);
      box.setRangeText(changed, lineStart, end, "select");
    }
    box.dispatchEvent(new Event("input"));
  });
}
