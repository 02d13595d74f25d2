// Widget runtime: mounts each [data-widget] figure's view. Answers come from the states baked
// into the page; Pyodide starts in a Web Worker only when a learner asks for live Python.
// Each text is made from the page's runtime settings: its Pyodide packages and the course package's name.
const listed = (names) => new Intl.ListFormat("en", { type: "conjunction" }).format(names);
const STAGE_TEXT = {
  runtime: () => "Loading the Python runtime",
  package: (config, label) => `Loading ${label}`,
  course: (config) => `Loading the course's ${config.module} package`,
};
const SUBJECT = {
  runtime: () => "the Python runtime",
  package: (config, label) => `the ${label} package`,
  course: (config) => `the course's ${config.module} package`,
};
const CAUSE_TEXT = {
  missing: "is missing from this site",
  http: "could not be fetched from this site's server",
  integrity: "failed its integrity check (the file is not the one this site was built with)",
  unreachable: "could not be reached (you may be offline, or its server is blocked)",
  python: "could not be loaded into Python",
};
const STAGE_TIMEOUT_MS = 60000;  // per boot stage and per run; a page's runtime JSON may set timeoutMs (tests do)

function readJSON(element) {
  return element ? JSON.parse(element.textContent) : null;
}

function absolute(url) {
  return new URL(url, document.baseURI).href;
}

/** An error of live Python: the stage it happened in (runtime, package, course, run, timeout, worker), its cause. */
function liveError(stage, reason, { label = "", cause = "" } = {}) {
  return Object.assign(new Error(reason), { stage, label, cause });
}

/** Live Python: one worker per page, started on first use, shared by every widget and kept across runs and
 * retries (a retry resumes the boot at the stage that failed); replaced only when it stops answering. The
 * page keeps each runtime file and wheel a worker fetched and hands them to its replacement, so the page
 * downloads each once. */
class LivePython extends EventTarget {
  constructor(config) {
    super();
    this.config = config;
    this.timeout = config.timeoutMs ?? STAGE_TIMEOUT_MS;
    this.worker = null;
    this.ready = null;
    this.booting = null;  // {resolve, reject, arm} of the boot under way
    this.pending = new Map();
    this.nextId = 1;
    this.files = new Map();  // URL → {url, integrity, contentType, bytes} a worker fetched (see pyodide-worker.js)
  }

  boot() {
    this.ready ??= this.start().catch((error) => {
      this.ready = null;  // the next boot resumes in the same worker, unless it had to be replaced
      if (error.stage === "timeout" || error.stage === "worker") this.replace();
      throw error;
    });
    return this.ready;
  }

  /** The page's worker, made on first use. */
  started() {
    if (this.worker) return this.worker;
    this.worker = new Worker(absolute(this.config.worker), { type: "module" });
    this.worker.onerror = (event) => {  // the script did not load, or threw outside a message handler
      event.preventDefault();
      const error = liveError("worker", event.message);
      this.booting?.reject(error);
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
    };
    this.worker.onmessage = ({ data }) => this.receive(data);
    if (this.files.size) this.worker.postMessage({ type: "files", files: [...this.files.values()] });  // copies
    return this.worker;
  }

  /** Stop a worker that no longer answers; the next use starts a new one. */
  replace() {
    this.worker?.terminate();
    this.worker = null;
    this.ready = null;
    for (const [id, job] of this.pending) {
      this.pending.delete(id);
      job.reject(liveError("timeout", "the worker was stopped"));
    }
  }

  receive(data) {
    if (data.type === "file") this.files.set(data.file.url, data.file);
    else if (data.type === "progress") {
      this.booting?.arm(data.stage, data.label);
      this.dispatchEvent(new CustomEvent("progress", { detail: data }));
    } else if (data.type === "ready") this.booting?.resolve();
    else if (data.type === "failed") this.booting?.reject(liveError(data.stage, data.reason, data));
    else this.settle(data);
  }

  start() {
    return new Promise((resolve, reject) => {
      let timer;
      const finish = (settle) => (value) => { clearTimeout(timer); this.booting = null; settle(value); };
      const arm = (stage, label = "") => {  // each stage has STAGE_TIMEOUT_MS; a timeout names the stage's subject
        clearTimeout(timer);
        timer = setTimeout(() => this.booting?.reject(liveError("timeout", `no answer after ${this.timeout / 1000} s`,
          { label: SUBJECT[stage](this.config, label) })), this.timeout);
      };
      this.booting = { resolve: finish(resolve), reject: finish(reject), arm };
      arm("runtime");
      this.started().postMessage({ type: "boot", indexURL: absolute(this.config.indexURL),
        integrity: this.config.integrity, packages: this.config.packages,
        wheel: this.config.wheel ? absolute(this.config.wheel) : "", module: this.config.module });
    });
  }

  settle({ id, type, json, message, stage = "run" }) {
    const job = this.pending.get(id);
    this.pending.delete(id);
    if (type === "result") job?.resolve(JSON.parse(json));
    else job?.reject(liveError(stage, message));
  }

  async run(source, params) {
    await this.boot();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {  // a run that never returns keeps the worker busy: replace it
        this.settle({ id, type: "error", message: `no answer after ${this.timeout / 1000} s`, stage: "timeout" });
        this.replace();
      }, this.timeout);
      const done = (settle) => (value) => { clearTimeout(timer); settle(value); };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject) });
      this.worker.postMessage({ type: "run", id, source, params });
    });
  }
}

/** One plain sentence saying why live Python failed. */
function failureText(error, config) {
  if (error.stage === "run") return `the Python raised ${error.message}`;
  if (error.stage === "worker") return "the background worker for Python could not start";
  if (error.stage === "timeout") return error.label ? `${error.label} took too long to load` : "Python took too long to answer";
  return `${SUBJECT[error.stage](config, error.label)} ${CAUSE_TEXT[error.cause] ?? CAUSE_TEXT.python}`;
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
      this.status(`${STAGE_TEXT[detail.stage](python.config, detail.label)} (step ${detail.step} of ${detail.total})…`);
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
    if (this.python.config.missing) this.unavailable();
    this.figure.dataset.widgetReady = "true";
  }

  /** The build found this site's Pyodide copy lacking what the page needs: say so instead of trying. */
  unavailable() {
    this.part("live-run").hidden = true;
    // controls whose other values only live Python can answer cannot move here (their note says why)
    for (const input of this.form.querySelectorAll("[data-live-only] :is(input, select)")) input.disabled = true;
    this.status(this.unavailableText());
    this.explain(Object.entries(this.python.config.missing).map(([name, why]) => `${name}: ${why}`).join("; "));
  }

  unavailableText() {
    return `Live Python is not available on this site: its copy of Pyodide lacks ${listed(Object.keys(this.python.config.missing))}; `
      + "the results shown are the ones computed when the page was built.";
  }

  /** Put the technical reason under the status sentence (and in the console). */
  explain(reason) {
    this.part("live-status").dataset.reason = reason;
    this.part("live-reason").textContent = reason;
    this.part("live-detail").hidden = false;
    console.warn(`${this.figure.id}: live Python: ${reason}`);
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
    this.status(this.python.config.missing ? this.unavailableText() : "");
  }

  async live(params) {
    if (this.python.config.missing) { this.unavailable(); setForm(this.form, this.shown.params); return; }
    const ticket = ++this.latest;
    this.part("live-retry").hidden = true;
    this.part("live-detail").hidden = true;
    this.part("live-run").disabled = true;
    this.status("Starting live Python…");
    this.python.addEventListener("progress", this.onProgress);
    try {
      await this.python.boot();
      if (ticket === this.latest) this.status("Running the Python…");
      const result = await this.python.run(this.figure.querySelector("[data-widget-code]").textContent, params);
      if (ticket !== this.latest) return;
      this.present(result, "live", params);
      this.part("live-run").hidden = false;
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
    const reason = failureText(error, this.python.config);
    const stage = [error.stage, error.label, error.cause].filter(Boolean).join(" ");
    this.explain(`${stage}: ${error.message}`);
    const kept = this.shown.how === "baked" ? "the ones computed when the page was built" : "from the last live run";
    this.status(`Live Python is unavailable: ${reason}; the results shown are still ${kept}.`);
    setForm(this.form, this.shown.params);
    this.part("live-run").hidden = true;  // one control after a failure
    this.part("live-retry").hidden = false;
  }
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
  const python = new LivePython(config);
  await Promise.all([...document.querySelectorAll("[data-widget]")].map((figure) => mountOne(figure, python)));
  performance.mark("coursegen:widgets-ready");  // read by benchmarks/widgets.py
}

mountAll();
