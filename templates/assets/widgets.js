// Widget runtime: mounts each [data-widget] figure's view. Answers come from the states baked
// into the page; Pyodide starts in a Web Worker only when a learner asks for live Python.
// Each text is made from the page's runtime settings: its Pyodide packages and the course package's name.
const listed = (names) => new Intl.ListFormat("en", { type: "conjunction" }).format(names);
const STAGE_TEXT = {
  runtime: () => "Loading the Python runtime",
  packages: (config) => `Loading ${listed(config.packages)}`,
  course: (config) => `Loading the course's ${config.module} package`,
};
const FAILURE_TEXT = {
  runtime: () => "the Python runtime could not be loaded (you may be offline, or its server is blocked)",
  packages: (config) => `${listed(config.packages)} could not be loaded into Python`,
  course: (config) => `the course's ${config.module} package could not be loaded into Python`,
  timeout: () => "Python took too long to answer",
  worker: () => "the background worker for Python could not start",
};
const STAGE_TIMEOUT_MS = 60000;

function readJSON(element) {
  return element ? JSON.parse(element.textContent) : null;
}

function absolute(url) {
  return new URL(url, document.baseURI).href;
}

/** Live Python: one worker per page, booted on first use, restarted after a failure. */
class LivePython extends EventTarget {
  constructor(config) {
    super();
    this.config = config;
    this.ready = null;
    this.pending = new Map();
    this.nextId = 1;
  }

  boot() {
    this.ready ??= this.start().catch((error) => {
      this.worker?.terminate();
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  start() {
    return new Promise((resolve, reject) => {
      let timer;
      const fail = (stage, reason) => { clearTimeout(timer); reject(Object.assign(new Error(reason), { stage })); };
      const arm = (stage) => { clearTimeout(timer); timer = setTimeout(() => fail("timeout", stage), STAGE_TIMEOUT_MS); };
      this.worker = new Worker(absolute(this.config.worker), { type: "module" });
      this.worker.onerror = (event) => { event.preventDefault(); fail("worker", event.message); };
      this.worker.onmessage = ({ data }) => {
        if (data.type === "progress") { arm(data.stage); this.dispatchEvent(new CustomEvent("progress", { detail: data })); }
        else if (data.type === "ready") { clearTimeout(timer); resolve(); }
        else if (data.type === "failed") fail(data.stage, data.reason);
        else this.settle(data);
      };
      arm("runtime");
      this.worker.postMessage({ type: "boot", indexURL: absolute(this.config.indexURL),
        integrity: this.config.integrity, packages: this.config.packages,
        wheel: this.config.wheel ? absolute(this.config.wheel) : "", module: this.config.module });
    });
  }

  settle({ id, type, json, message, stage = "run" }) {
    const job = this.pending.get(id);
    this.pending.delete(id);
    if (type === "result") job?.resolve(JSON.parse(json));
    else job?.reject(Object.assign(new Error(message), { stage }));
  }

  async run(source, params) {
    await this.boot();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.settle({ id, type: "error", message: "no answer", stage: "timeout" }),
        STAGE_TIMEOUT_MS);
      const done = (settle) => (value) => { clearTimeout(timer); settle(value); };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject) });
      this.worker.postMessage({ type: "run", id, source, params });
    });
  }
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
      const kind = rule.type === "int" ? "a whole number" : "a number";
      return [params, `${input.getAttribute("aria-label") || name} must be ${kind} from ${rule.min} to ${rule.max}.`];
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
      this.status(`${STAGE_TEXT[detail.stage](python.config)} (step ${detail.step} of ${detail.total})…`);
    };
  }

  part(name) { return this.panel.querySelector(`[data-${name}]`); }

  status(text) { this.part("live-status").textContent = text; }

  fill(result) { fill(this.figure, result); }

  /** Start answering: `render(result, how)` draws a result ("baked" or "live"). */
  start(render) {
    this.render = render;
    this.form.hidden = false;
    this.panel.hidden = false;
    // sliders and menus answer as they move; exact-value boxes once the number is complete
    this.form.addEventListener("input", (event) => { if (event.target.type !== "number") this.update(event); });
    this.form.addEventListener("change", (event) => { if (event.target.type === "number") this.update(event); });
    this.form.addEventListener("submit", (event) => { event.preventDefault(); this.update(); });
    for (const name of ["live-run", "live-retry"]) {
      this.part(name).addEventListener("click", () => this.live(readParams(this.form, this.spec)[0]));
    }
    this.figure.dataset.widgetReady = "true";
  }

  /** Draw a result and tell listeners (tests, benchmarks) which it was. */
  present(result, how, params) {
    this.shown = { params, how };
    this.render(result, how);
    this.part("widget-source").textContent = how === "live"
      ? "Showing a live result, computed by Python in your browser."
      : "Showing results computed when this page was built.";
    this.figure.dispatchEvent(new CustomEvent("widget:result", { detail: { result, how } }));
  }

  update(event) {
    if (event?.target?.name) syncTwin(this.form, event.target);
    const [params, problem] = readParams(this.form, this.spec);
    if (problem) { this.status(problem); return; }
    const result = this.lookup(params);
    if (!result) { this.live(params); return; }
    this.latest++;
    this.present(result, "baked", params);
    this.status("");
  }

  async live(params) {
    const ticket = ++this.latest;
    this.part("live-retry").hidden = true;
    this.part("live-run").disabled = true;
    this.status("Starting live Python…");
    this.python.addEventListener("progress", this.onProgress);
    try {
      const result = await this.python.run(this.figure.querySelector("[data-widget-code]").textContent, params);
      if (ticket !== this.latest) return;
      this.present(result, "live", params);
      this.status("Live result ready.");
    } catch (error) {
      if (ticket === this.latest) this.failed(error);
    } finally {
      this.python.removeEventListener("progress", this.onProgress);
      this.part("live-progress").hidden = true;
      this.part("live-run").disabled = false;
    }
  }

  /** Say in one sentence why live Python is unavailable; keep (and point the controls at) what is shown. */
  failed(error) {
    const reason = error.stage === "run" ? `the Python raised ${error.message}` : FAILURE_TEXT[error.stage](this.python.config);
    this.part("live-status").dataset.reason = `${error.stage}: ${error.message}`;  // the technical detail, for tests
    const kept = this.shown.how === "baked" ? "the ones computed when the page was built" : "from the last live run";
    this.status(`Live Python is unavailable: ${reason}; the results shown are still ${kept}.`);
    setForm(this.form, this.shown.params);
    this.part("live-retry").hidden = false;
  }
}

async function mountAll() {
  const config = readJSON(document.querySelector("[data-widget-runtime]"));
  const python = new LivePython(config);
  for (const figure of document.querySelectorAll("[data-widget]")) {
    const view = await import(absolute(figure.dataset.view));
    view.mount(figure, JSON.parse(figure.dataset.params), new WidgetRuntime(figure, python));
  }
  performance.mark("coursegen:widgets-ready");  // read by benchmarks/widgets.py
}

mountAll();
