// Code cells, live: each cell's code can be edited (the exercises' CodeMirror editor) and run in the page's
// Python worker (python-client.js). A run sends every cell's code up to the edited one, which the harness
// (coursegen/features/cells/live.py, in the page's runtime data) runs in order in a fresh namespace; the
// edited cell's outputs replace the baked ones, drawn as the build draws them. Reset puts the baked code and
// outputs back. An edit is kept with the learner's progress (the store review.js opened, keyed by page and
// cell). When Python cannot load, the cell says why in one sentence (the widgets' live.* texts) and keeps
// what it shows.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { PythonClient } from "coursegen/python-client.js";
import { failureText, reasonDisclosure, showReason, technicalReason } from "coursegen/python-failure.js";

const RUN_LIMIT_MS = 60000;  // a boot stage's or a run's time; the runtime data may set timeoutMs (tests do)
/** The HTML of one output, as coursegen/features/cells/output.py writes it. */
function outputNode([kind, text, cut]) {
  // Markup made by the harness (matplotlib's SVG, a value's _repr_html_): the same the build bakes.
  if (kind === "svg") {
    const parsed = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    return [h("figure", { class: "cell-figure" }, document.importNode(parsed, true))];
  }
  if (kind === "html") {
    const parsed = new DOMParser().parseFromString(text, "text/html").body;
    return [h("div", { class: "cell-html" }, ...[...parsed.childNodes].map((node) => document.importNode(node, true)))];
  }
  const nodes = [h("pre", { class: `cell-${kind}`, tabindex: "0" }, text)];
  if (cut) nodes.push(h("p", { class: "cell-cut" }, t("cell.output_cut", { count: cut.toLocaleString("en") })));
  return nodes;
}

/** Make every code cell of the page editable and runnable; `store` keeps edits (progress.js). */
export function enhanceCells(store, page) {
  const script = document.querySelector("[data-cells-runtime]");
  if (!script) return;
  const config = JSON.parse(script.textContent);
  const limit = config.timeoutMs ?? RUN_LIMIT_MS;
  const python = new PythonClient(config.runtime, config.packages, { stage: limit, run: limit });
  const codes = config.cells.map(([code]) => code);
  const cells = [...document.querySelectorAll("[data-code-cell]")];
  for (const cell of cells) enhanceOne(cell, { config, python, codes, store, key: `cell:${page}:${cell.dataset.codeCell}` });
}

function enhanceOne(cell, { config, python, codes, store, key }) {
  const index = Number(cell.dataset.codeCell) - 1;
  const baked = codes[index].replace(/\n$/, "");  // the editor shows no empty last line
  const input = cell.querySelector(".code-cell-input");
  if (!input) return;  // remove-input: nothing to edit
  const bakedOutput = cell.querySelector(".code-cell-output");
  const output = bakedOutput ?? h("div", { class: "code-cell-output", hidden: true });
  if (!bakedOutput) input.after(output);
  const bakedNodes = [...output.childNodes];
  const box = h("textarea", { class: "code-cell-code", spellcheck: "false", "aria-label": t("cell.code_label"),
    rows: String(baked.split("\n").length) });
  box.value = store.record(key).code ?? baked;
  const run = h("button", { type: "button", class: "code-cell-run" }, t("cell.run"));
  const reset = h("button", { type: "button", class: "code-cell-reset" }, t("cell.reset"));
  const status = h("p", { class: "code-cell-status", role: "status", "aria-live": "polite" });
  const pre = input.querySelector("pre");
  const shown = () => pre.closest(".code-block") ?? pre;  // course.js may have boxed it with a Copy button
  let editor = null;
  const edit = async () => {
    if (box.isConnected) return;
    shown().replaceWith(box);
    try {
      const { createEditor } = await import("coursegen/vendor/codemirror.js");
      editor = createEditor(box, { onChange(text) { box.value = text; box.dispatchEvent(new Event("input")); } });
      editor.focus();
    } catch {
      box.focus();  // the text box keeps working
    }
  };
  const editButton = h("button", { type: "button", class: "code-cell-edit" }, t("cell.edit"));
  editButton.addEventListener("click", () => { editButton.hidden = true; edit(); });
  const reason = reasonDisclosure();  // the technical reason, on request, as widgets and exercises give it
  input.append(h("div", { class: "code-cell-buttons" }, editButton, run, reset), status, reason);
  box.addEventListener("input", () => {
    codes[index] = box.value;
    if (box.value === baked) store.clear(key); else store.update(key, { code: box.value });
  });
  if (box.value !== baked) {  // an edit kept from an earlier visit
    codes[index] = box.value;
    editButton.hidden = true;
    edit();
  }
  reset.addEventListener("click", () => {
    box.value = baked;
    codes[index] = baked;
    if (editor) editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: baked } });
    store.clear(key);
    output.replaceChildren(...bakedNodes);
    output.hidden = !bakedOutput;
    status.textContent = "";
    reason.hidden = true;
  });
  run.addEventListener("click", async () => {
    if (config.missing) {
      status.textContent = t("live.not_on_this_site", { packages: Object.keys(config.missing).join(", ") });
      return;
    }
    run.disabled = true;
    status.textContent = t("live.starting");
    output.toggleAttribute("data-pending", true);  // shown dimmed until this run's outputs replace it
    const stalled = ({ detail }) => { status.textContent = t("live.not_arriving", { seconds: detail.seconds }); };
    python.addEventListener("stall", stalled);
    try {
      const cells = config.cells.map(([, tags], i) => [codes[i], tags]);
      const result = await python.run(config.harness, { cells, index, page: config.page });
      output.replaceChildren(...(result.outputs ?? []).flatMap(outputNode));
      output.hidden = false;
      status.textContent = result.error ? t("live.raised", { error: result.error }) : t("live.showing_live");
    } catch (error) {
      status.textContent = t("live.unavailable_baked", { reason: failureText(error, config.runtime) });
      showReason(reason, technicalReason(error, config.runtime), "code cell");
    } finally {
      python.removeEventListener("stall", stalled);
      output.toggleAttribute("data-pending", false);
      run.disabled = false;
    }
  });
}
