// Widget runtime: mounts each [data-widget] figure's view. Answers come from the states baked
// into the page; Pyodide starts in a Web Worker (python-client.js) only when a learner asks for live Python.
// Each text is made from the page's runtime settings: its Pyodide packages and the course package's name.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";
import { PythonClient } from "coursegen/python-client.js";
import { failureText, showReason, technicalReason } from "coursegen/python-failure.js";

const listed = (names) => new Intl.ListFormat(document.documentElement.lang || "en", { type: "conjunction" }).format(names);
const STAGE_TEXT = {
  runtime: () => t("live.loading_runtime"),
  package: (config, label) => t("live.loading_package", { package: label }),
  course: (config) => t("live.loading_course", { module: config.module }),
};
const STAGE_TIMEOUT_MS = 60000;  // per boot stage and per run; a page's runtime JSON may set timeoutMs, or runTimeoutMs for runs alone (tests do)

function readJSON(element) {
  return element ? JSON.parse(element.textContent) : null;
}

function absolute(url) {
  return new URL(url, document.baseURI).href;
}

/** The baked states of one figure: look one up by its parameters. */
function bakedStates(figure) {
  const data = readJSON(figure.querySelector("[data-widget-states]"));
  const names = Object.keys(data.params);
  const key = (values) => JSON.stringify(values);
  const table = new Map();
  data.params[names[0]].forEach((_, i) => {
    const result = { ...data.const };
    for (const [output, column] of Object.entries(data.outputs)) result[output] = column[i];
    table.set(key(names.map((name) => data.params[name][i])), result);
  });
  return (params) => table.get(key(names.map((name) => params[name])));
}

/** Read the form into typed parameters; returns [params, problem sentence or ""]. */
function readParams(form, spec) {
  const params = {};
  for (const [name, rule] of Object.entries(spec)) {
    const field = form.elements.namedItem(name);
    const input = field instanceof RadioNodeList ? field[field.length - 1] : field;
    if (rule.type === "choice") {
      params[name] = rule.choices.find((choice) => String(choice) === input.value);
      continue;
    }
    const value = Number(input.value);
    const whole = rule.type === "int" ? Number.isInteger(value) : true;
    if (input.value === "" || !Number.isFinite(value) || !whole || value < rule.min || value > rule.max) {
      const values = { name: input.getAttribute("aria-label") || name, min: rule.min, max: rule.max };
      return [params, t(rule.type === "int" ? "live.whole_number" : "live.number", values)];
    }
    params[name] = value;
  }
  return [params, ""];
}

/** Keep a slider and its exact-value box showing the same number. */
function syncTwin(form, changed) {
  const field = form.elements.namedItem(changed.name);
  if (!(field instanceof RadioNodeList)) return;
  for (const input of field) if (input !== changed && changed.value !== "") input.value = changed.value;
}

function setForm(form, params) {
  for (const [name, value] of Object.entries(params)) {
    const field = form.elements.namedItem(name);
    for (const input of field instanceof RadioNodeList ? field : [field]) input.value = String(value);
  }
}

function fill(figure, result) {
  for (const element of figure.querySelectorAll("[data-out]")) {
    element.dataset.baked ??= element.textContent;
    const value = result[element.dataset.out];
    element.textContent = value === undefined || typeof value === "object" ? element.dataset.baked : String(value);
  }
}

/** The per-figure runtime handed to a view's mount(): baked answers first, live Python on request. */
class WidgetRuntime {
  constructor(figure, python) {
    this.figure = figure;
    this.python = python;
    this.config = python.runtime;  // the page's runtime settings (data-widget-runtime)
    this.spec = JSON.parse(figure.dataset.spec);
    this.lookup = bakedStates(figure);
    this.form = figure.querySelector("[data-widget-controls]");
    this.panel = figure.querySelector("[data-widget-live]");
    this.render = () => {};
    this.latest = 0;  // ticket of the newest request: older live answers are dropped
    this.shown = { params: JSON.parse(figure.dataset.params), how: "baked" };  // what the figure displays
    this.onProgress = ({ detail }) => {
      this.part("live-progress").hidden = false;
      this.part("live-progress").max = detail.total;
      this.part("live-progress").value = detail.step - 1;
      const stage = STAGE_TEXT[detail.stage](this.config, detail.label);
      this.status(t("live.step", { stage, step: detail.step, total: detail.total }));
    };
    this.onStall = ({ detail }) => this.status(t("live.not_arriving", { seconds: detail.seconds }));
    this.result = figure.querySelector("[data-widget-result]");
    // Said (role=status) and shown over the result while it is for other values than the controls'.
    this.pendingNote = h("p", { class: "widget-pending", role: "status" });
  }

  part(name) { return this.panel.querySelector(`[data-${name}]`); }

  status(text) { this.part("live-status").textContent = text; }

  fill(result) { fill(this.figure, result); }

  /** Start answering: `render(result, how)` draws a result ("baked" or "live"). */
  start(render) {
    this.render = render;
    this.form.hidden = false;
    this.panel.hidden = false;
    this.result?.prepend(this.pendingNote);
    // sliders and menus answer as they move; exact-value boxes once the number is complete
    this.form.addEventListener("input", (event) => { if (event.target.type !== "number") this.update(event); });
    this.form.addEventListener("change", (event) => { if (event.target.type === "number") this.update(event); });
    this.form.addEventListener("submit", (event) => { event.preventDefault(); this.update(); });
    for (const name of ["live-run", "live-retry"]) {
      this.part(name).addEventListener("click", () => this.live(readParams(this.form, this.spec)[0]));
    }
    if (this.config.missing) this.unavailable();
    this.figure.dataset.widgetReady = "true";
  }

  /** The build found this site's Pyodide copy lacking what the page needs: say so instead of trying. */
  unavailable() {
    this.part("live-run").hidden = true;
    // controls whose other values only live Python can answer cannot move here (their note says why)
    for (const input of this.form.querySelectorAll("[data-live-only] :is(input, select)")) input.disabled = true;
    this.status(this.unavailableText());
    this.explain(Object.entries(this.config.missing).map(([name, why]) => `${name}: ${why}`).join("; "));
  }

  unavailableText() {
    return t("live.not_on_this_site", { packages: listed(Object.keys(this.config.missing)) });
  }

  /** Put the technical reason under the status sentence (and in the console). */
  explain(reason) {
    this.part("live-status").dataset.reason = reason;
    showReason(this.part("live-detail"), reason, this.figure.id);
  }

  /** Draw a result and tell listeners (tests, benchmarks) which it was. */
  present(result, how, params) {
    this.shown = { params, how };
    this.pending(false);
    this.render(result, how);
    this.part("widget-source").textContent = how === "live" ? t("live.showing_live") : t("live.showing_baked");
    this.figure.dispatchEvent(new CustomEvent("widget:result", { detail: { result, how } }));
  }

  /** Mark the result shown as not (yet) the answer for the controls' values, or unmark it. */
  pending(on) {
    if (!this.result) return;
    if (!this.pendingNote.isConnected) this.result.prepend(this.pendingNote);  // a view may redraw the whole box
    this.result.toggleAttribute("data-pending", on);
    this.pendingNote.textContent = on ? t("live.pending") : "";
  }

  update(event) {
    if (event?.target?.name) syncTwin(this.form, event.target);
    const [params, problem] = readParams(this.form, this.spec);
    if (problem) { this.status(problem); return; }
    const result = this.lookup(params);
    if (!result) { this.live(params); return; }
    this.latest++;
    this.present(result, "baked", params);
    this.status(this.config.missing ? this.unavailableText() : "");
  }

  async live(params) {
    if (this.config.missing) { this.unavailable(); setForm(this.form, this.shown.params); return; }
    const ticket = ++this.latest;
    this.part("live-retry").hidden = true;
    this.part("live-detail").hidden = true;
    this.part("live-run").disabled = true;
    this.status(t("live.starting"));
    if (Object.keys(params).some((name) => params[name] !== this.shown.params[name])) this.pending(true);
    this.python.addEventListener("progress", this.onProgress);
    this.python.addEventListener("stall", this.onStall);
    try {
      await this.python.boot();
      if (ticket === this.latest) this.status(t("live.running"));
      const result = await this.python.run(await this.source(), params);
      if (ticket !== this.latest) return;
      this.present(result, "live", params);
      this.part("live-run").hidden = false;
      this.status(t("live.ready"));
    } catch (error) {
      if (ticket === this.latest) this.failed(error);
    } finally {
      this.python.removeEventListener("progress", this.onProgress);
      this.python.removeEventListener("stall", this.onStall);
      this.part("live-progress").hidden = true;
      this.part("live-run").disabled = false;
    }
  }

  /** The Python a live run executes: the entry shown under "Show the Python", and for a widget without a view
   * of its own (data-present) present.py after it, so that run() gives the record the generic view draws. */
  async source() {
    const code = this.figure.querySelector("[data-widget-code]").textContent;
    return "present" in this.figure.dataset ? code + await presenting(this.config.present) : code;
  }

  /** Say in one sentence why live Python is unavailable; keep (and point the controls at) what is shown. */
  failed(error) {
    const reason = failureText(error, this.config);
    this.explain(technicalReason(error, this.config));
    this.status(t(this.shown.how === "baked" ? "live.unavailable_baked" : "live.unavailable_live", { reason }));
    setForm(this.form, this.shown.params);
    this.pending(false);  // the controls are back at the values of the result shown
    this.part("live-run").hidden = true;  // one control after a failure
    this.part("live-retry").hidden = false;
  }
}

let presenter = null;  // the text present.py adds to an entry, fetched once per page

/** Return Python that wraps the entry's run() in present.py's present(), which it runs apart from the entry's names. */
function presenting(url) {
  presenter ??= fetch(absolute(url)).then((response) => {
    if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
    return response.text();
  }).then((text) => [
    "", "", `_coursegen_present = {"__name__": "coursegen_present"}`,
    `exec(${JSON.stringify(text)}, _coursegen_present)`,  // a JSON string is a Python string literal
    "_coursegen_entry = run", "def run(**params):",
    "    return _coursegen_present['present'](_coursegen_entry(**params))", "",
  ].join("\n")).catch((error) => {
    presenter = null;  // the next run asks again
    throw { stage: "run", message: String(error?.message ?? error) };
  });
  return presenter;
}

/** Mount one figure's view; a view that fails to load or mount leaves the others working. */
async function mountOne(figure, python) {
  try {
    const view = await import(absolute(figure.dataset.view));
    view.mount(figure, JSON.parse(figure.dataset.params), new WidgetRuntime(figure, python));
  } catch (error) {
    console.error(`${figure.id}: its view could not be mounted: ${error?.message ?? error}`);
  }
}

async function mountAll() {
  const config = readJSON(document.querySelector("[data-widget-runtime]")) ?? {};
  // a page without widgets' runtime settings has no live Python; its figures still show the baked states
  const python = new PythonClient(config, config.packages ?? [],
    { stage: config.timeoutMs ?? STAGE_TIMEOUT_MS, run: config.runTimeoutMs ?? config.timeoutMs ?? STAGE_TIMEOUT_MS });
  await Promise.all([...document.querySelectorAll("[data-widget]")].map((figure) => mountOne(figure, python)));
  performance.mark("coursegen:widgets-ready");  // read by benchmarks/widgets.py
}

mountAll();
