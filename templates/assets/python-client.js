// The page's one client of the Pyodide worker (pyodide-worker.js, whose header documents the protocol):
// widgets' live Python (widgets.js) and exercises' Run and Check (review/exercise.js) both talk to it
// through a PythonClient. One client starts one worker on first use and keeps it across runs; a boot that
// failed resumes in the same worker at the stage that failed, and a worker that stops answering is replaced.
// The page keeps each runtime file and wheel a worker fetched and hands them to its replacement, so the
// page downloads each once. The client holds no UI text: its errors carry a stage and a cause, which
// python-failure.js turns into a sentence; its technical reasons, and the worker's, come from the
// catalogue (worker.*).
import { messages, t } from "coursegen/messages.js";

const WORKER_TEXTS = Object.fromEntries(Object.entries(messages).filter(([key]) => key.startsWith("worker.")));

/** An error of live Python: the stage it happened in (runtime, package, course, run, timeout, worker),
 * with the boot stage's label (a package's name) and cause (see the protocol); a timeout says `during`
 * which boot stage it came ("" for a run), and `restarted` when another run's timeout stopped the worker. */
export function pythonError(stage, reason, { label = "", cause = "", during = "", restarted = false } = {}) {
  return Object.assign(new Error(reason), { stage, label, cause, during, restarted });
}

const absolute = (url) => new URL(url, document.baseURI).href;

/** How long a boot may go without a word from its worker before the client reports a "stall" (the runtime is
 * not arriving: a CDN that drops requests silently leaves them hanging for a minute or more). The boot goes on;
 * widgets, exercises and code cells say so in one sentence. A page may set `globalThis.coursegenStallMs`
 * before its modules run to change it (the browser tests shorten it so). */
export const STALL_MS = 10000;

/** Return the stall limit in force, in ms. */
export function stallLimit() {
  return globalThis.coursegenStallMs ?? STALL_MS;
}

export class PythonClient extends EventTarget {
  /**
   * runtime: {worker, indexURL, integrity, wheel, module} as the build wrote them (URLs relative to the page);
   * packages: the Pyodide packages to load, or a function returning them at boot (exercises add theirs late);
   * limits, in ms: `stage` for each boot stage (re-armed as each starts), `boot` for the whole boot, `run` for
   * one run. A boot stage's or a run's timeout replaces the worker. The widgets and the exercises keep
   * their own values (widgets.js, review/exercise.js).
   */
  constructor(runtime, packages, { stage = 0, boot = 0, run }, makeWorker = (url) => new Worker(url, { type: "module" })) {
    super();
    this.runtime = runtime;
    this.packages = packages;
    this.limits = { stage, boot, run };
    this.makeWorker = makeWorker;
    this.worker = null;
    this.ready = null;
    this.booting = null;  // {resolve, reject, arm} of the boot under way
    this.pending = new Map();  // run id → {resolve, reject}
    this.nextId = 1;
    this.files = new Map();  // URL → {url, integrity, contentType, bytes} a worker fetched
  }

  /** Resolve once every boot stage is done; a failed boot is tried again by the next call. */
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
    this.worker = this.makeWorker(absolute(this.runtime.worker));
    this.worker.onerror = (event) => {  // the script did not load, or threw outside a message handler
      event.preventDefault();
      const error = pythonError("worker", event.message || t("worker.not_started"));
      this.booting?.reject(error);
      for (const job of this.pending.values()) job.reject(error);
      this.pending.clear();
    };
    this.worker.onmessage = ({ data }) => this.receive(data);
    if (this.files.size) this.worker.postMessage({ type: "files", files: [...this.files.values()] });  // copies
    return this.worker;
  }

  /** Stop a worker that no longer answers; the next use starts a new one. Runs still waiting on it end. */
  replace() {
    this.worker?.terminate();
    this.worker = null;
    this.ready = null;
    for (const [id, job] of this.pending) {
      this.pending.delete(id);
      job.reject(pythonError("timeout", t("worker.stopped"), { restarted: true }));
    }
  }

  receive(data) {
    this.booting?.heard();
    if (data.type === "file") this.files.set(data.file.url, data.file);
    else if (data.type === "progress") {
      this.booting?.arm(data.stage, data.label);
      this.dispatchEvent(new CustomEvent("progress", { detail: data }));
    } else if (data.type === "ready") this.booting?.resolve();
    else if (data.type === "failed") this.booting?.reject(pythonError(data.stage, data.reason, data));
    else if (data.type === "result" || data.type === "error") this.settle(data);
  }

  start() {
    return new Promise((resolve, reject) => {
      let stageTimer, bootTimer, stallTimer;
      const finish = (settle) => (value) => {
        clearTimeout(stageTimer);
        clearTimeout(bootTimer);
        clearTimeout(stallTimer);
        this.booting = null;
        settle(value);
      };
      let current = { stage: "runtime", label: "" };  // the boot stage under way, which a timeout names
      const late = (ms) => () => this.booting?.reject(
        pythonError("timeout", t("worker.no_answer", { seconds: ms / 1000 }), { label: current.label, during: current.stage }));
      const arm = (stage, label = "") => {  // each boot stage has its own time, when there is a limit per stage
        current = { stage, label };
        clearTimeout(stageTimer);
        if (this.limits.stage) stageTimer = setTimeout(late(this.limits.stage), this.limits.stage);
      };
      const heard = () => {  // silence for stallLimit() ms: tell the page, which says the runtime is not arriving
        clearTimeout(stallTimer);
        const limit = stallLimit();
        stallTimer = setTimeout(() => this.dispatchEvent(new CustomEvent("stall",
          { detail: { ...current, seconds: Math.round(limit / 1000) } })), limit);
      };
      this.booting = { resolve: finish(resolve), reject: finish(reject), arm, heard };
      arm("runtime");
      heard();
      if (this.limits.boot) bootTimer = setTimeout(late(this.limits.boot), this.limits.boot);
      const packages = typeof this.packages === "function" ? this.packages() : this.packages;
      const { indexURL, integrity = "", wheel = "", module = "" } = this.runtime;
      this.started().postMessage({ type: "boot", indexURL: absolute(indexURL), integrity, packages: [...packages],
        wheel: wheel ? absolute(wheel) : "", module, messages: WORKER_TEXTS });
    });
  }

  settle({ id, type, json, message, stage = "run" }) {
    const job = this.pending.get(id);
    this.pending.delete(id);
    if (type === "result") job?.resolve(JSON.parse(json));
    else job?.reject(pythonError(stage, message));
  }

  /** Return what `run(**params)` in `source` returned; a run past the run limit replaces the worker. */
  async run(source, params) {
    await this.boot();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {  // a run that never returns keeps the worker busy: replace it
        const message = t("worker.no_answer", { seconds: this.limits.run / 1000 });
        this.settle({ id, type: "error", message, stage: "timeout" });
        this.replace();
      }, this.limits.run);
      const done = (settle) => (value) => { clearTimeout(timer); settle(value); };
      this.pending.set(id, { resolve: done(resolve), reject: done(reject) });
      this.worker.postMessage({ type: "run", id, source, params });
    });
  }
}
