// Live Python for widgets, off the main thread (a module worker, as Pyodide requires). One worker serves
// every widget of a page: it boots Pyodide, each Pyodide package the page's widgets declare, and the course's
// own package (a wheel) in stages, then runs widget entries on request. A stage that is done stays done: a
// second "boot" (Try again) resumes at the stage that failed, so the runtime is fetched once per worker.
// Each runtime file and wheel it fetches is also posted to the page, which hands them to a worker that
// replaces this one: that worker serves them to Pyodide from memory, so a page downloads them once.
//
// Protocol (postMessage; every message is a plain object with a `type`):
//   in   {type: "boot", indexURL, integrity, packages: [name], wheel, module, messages}
//          indexURL: Pyodide's folder (absolute URL); integrity: pyodide.mjs's SRI ("" for none);
//          wheel: the course package's wheel URL ("" for none); module: the name `import`ed after it;
//          messages: the catalogue's "worker.*" texts, in the course's language, for the reasons below
//          (a worker has no import map to reach coursegen/messages.js; a text not sent stays English).
//   in   {type: "run", id, source, params}   source defines run(**params); params is a JSON object.
//   in   {type: "files", files: [file]}       files an earlier worker of the page fetched, sent before the
//          first boot; a file is {url, integrity, contentType, bytes: ArrayBuffer}.
//   out  {type: "progress", stage, label, step, total}   a boot stage starts. stage is "runtime",
//          "package" (label: the package's name) or "course"; stages with nothing to do are left out.
//   out  {type: "ready"}                                 every stage is done; runs may follow.
//   out  {type: "failed", stage, label, cause, reason}   a boot stage failed; when a file of another Pyodide package
//          it needs failed, stage is "package" and label that package's name. cause is one of "missing"
//          (HTTP 404), "http" (another status), "integrity" (bytes differ from the expected hash),
//          "unreachable" (network error), "python" (the code raised); reason is the technical detail.
//   out  {type: "result", id, json}                      run(**params) returned; json is its JSON text.
//   out  {type: "error", id, message}                    run raised: the last line of the traceback.
//   out  {type: "file", file}                            a file under indexURL, or the wheel, was fetched whole
//          (its bytes are a copy, transferred); the page keeps it for a replacement worker.
// A new message type is handled by adding it to HANDLERS at the bottom. The page's one client of this
// worker (templates/assets/python-client.js) times stages and runs out and replaces a worker that takes too long.
let pyodide = null;
// The technical reasons' texts, in English until a boot sends the course's (see the protocol above).
let texts = {
  "worker.http_status": "{url} answered HTTP {status}",
  "worker.unreachable": "{url} could not be reached: {error}",
  "worker.hash": "{url} does not match its expected hash {integrity}",
  "worker.sri": "{url} does not match its SRI {integrity} ({error})",
  "worker.pyodide_said": "{reason} (Pyodide said: {said})",
};
/** A reason's text with its {placeholders} filled, as coursegen/messages.js's t() does. */
const say = (key, values) => texts[key].replace(/\{\{|\}\}|\{(\w+)\}/g, (whole, name) =>
  name === undefined ? whole[0] : String(values[name]));
const done = new Set();  // stages finished in this worker: "runtime", "package:<name>", "course"
const post = (message, transfer = []) => self.postMessage(message, transfer);

/** A boot stage's failure with its cause (see the protocol above), and the Pyodide package whose file failed
 * when it is known (loading ml-dtypes fetches numpy's wheel too: a bad numpy wheel is numpy's failure). */
class StageError extends Error {
  constructor(cause, reason, pkg = "") { super(reason); this.cause = cause; this.package = pkg; }
}

const networkFetch = self.fetch.bind(self);
const kept = new Map();  // URL → promise of the file (as in the protocol) fetched once in this page's life
let keptFrom = [];  // URL prefixes whose files are kept: Pyodide's folder and the course's wheel

/** Keep one file being fetched whole, and post a copy to the page; a failed fetch is not kept. */
function keep(request, responded) {
  const file = responded.then((response) => {
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const contentType = response.headers.get("Content-Type") ?? "";
    return response.clone().arrayBuffer()  // cloned before the caller reads the body
      .then((bytes) => ({ url: request.url, integrity: request.integrity, contentType, bytes }));
  });
  kept.set(request.url, file);
  file.then((found) => {
    const copy = found.bytes.slice(0);
    post({ type: "file", file: { ...found, bytes: copy } }, [copy]);
  }, () => kept.delete(request.url));
}

/** `fetch` for Pyodide and this worker: a file kept in this page's life (by this worker or an earlier one)
 * is answered from memory (instantiateStreaming needs its Content-Type); any other is fetched, and kept
 * when it is a runtime file or a wheel. */
async function keptFetch(input, init) {
  const request = new Request(input, init);
  if (request.method !== "GET" || !keptFrom.some((prefix) => request.url.startsWith(prefix))) return networkFetch(request);
  const file = await kept.get(request.url)?.catch(() => null);
  if (file && (!request.integrity || request.integrity === file.integrity)) {
    return new Response(file.bytes.slice(0), { headers: { "Content-Type": file.contentType } });
  }
  const responded = networkFetch(request);
  if (!file) keep(request, responded);
  if (runtimeFetchFailed) {  // Pyodide hangs on some runtime files that fail (the wasm): the boot must not
    const failed = runtimeFetchFailed;
    responded.then((response) => { if (!response.ok) failed(statusError(request.url, response.status)); }, () => {});
  }
  return responded;
}

let runtimeFetchFailed = null;  // while the runtime loads: rejects the boot with a StageError naming the file

/** The StageError of a file that answered an error status: "missing" for a 404, "http" for another. */
function statusError(url, status) {
  return new StageError(status === 404 ? "missing" : "http", say("worker.http_status", { url, status }));
}
self.fetch = keptFetch;

function files({ files }) {
  for (const file of files) if (!kept.has(file.url)) kept.set(file.url, Promise.resolve(file));
}

const toBase64 = (hex) => btoa(String.fromCharCode(...hex.match(/../g).map((byte) => parseInt(byte, 16))));

/** Fetch `url` again to learn why loading it failed: its HTTP status, the network, or its integrity. */
async function diagnose(url, integrity) {
  let response;
  try {
    response = await networkFetch(url, { cache: "no-store" });
  } catch (error) {
    return new StageError("unreachable", say("worker.unreachable", { url, error: error.message }));
  }
  if (!response.ok) return statusError(url, response.status);
  if (integrity) {
    try {
      await networkFetch(url, { integrity, cache: "no-store" });
    } catch {
      return new StageError("integrity", say("worker.hash", { url, integrity }));
    }
  }
  return null;
}

let lockPackages = null;  // the distribution's pyodide-lock.json "packages", read once (Pyodide has read it too)

/** The files [URL, SRI from the lock's sha256, package name] of `names` and what they depend on; a URL stands
 * for itself (with no package name). */
async function filesOf(indexURL, names) {
  lockPackages ??= await fetch(indexURL + "pyodide-lock.json").then((r) => r.json()).then((l) => l.packages)
    .catch(() => null);  // kept only once read: a retry may find it
  const lock = lockPackages ?? {};
  const files = [], seen = new Set(), todo = [...names];
  while (todo.length) {
    const name = todo.pop();
    if (seen.has(name)) continue;
    seen.add(name);
    const entry = lock[name];
    if (entry) {
      const sri = entry.sha256 ? "sha256-" + toBase64(entry.sha256) : "";
      files.push([new URL(entry.file_name, indexURL).href, sri, name]);
      todo.push(...(entry.depends ?? []));
    } else if (/^[a-z]+:/.test(name)) files.push([name, "", ""]);
  }
  return files;
}

/** Turn what Pyodide reported about loading `names` into a StageError naming the true cause and its package. */
async function explain(config, names, messages) {
  const text = messages.map((message) => message.trim()).join(" ");  // e.g. "… while loading numpy:" "Failed to fetch"
  const urls = [...text.matchAll(/'([a-z]+:[^']+)'/g)].map(([, url]) => url);
  for (const [url, integrity, pkg] of await filesOf(config.indexURL, [...names, ...urls])) {
    const found = await diagnose(url, integrity);
    if (found) return new StageError(found.cause, say("worker.pyodide_said", { reason: found.message, said: text }), pkg);
  }
  return new StageError("python", text);
}

async function loadRuntime(config) {
  // fetch with SRI, then import the checked text: a plain import() cannot check integrity
  const { indexURL, integrity } = config;
  let response;
  try {
    response = await fetch(indexURL + "pyodide.mjs", integrity ? { integrity } : {});
  } catch (error) {
    throw (await diagnose(indexURL + "pyodide.mjs", "")) ??
      new StageError("integrity", say("worker.sri", { url: `${indexURL}pyodide.mjs`, integrity, error: error.message }));
  }
  if (!response.ok) {
    throw (await diagnose(indexURL + "pyodide.mjs", "")) ??
      new StageError("http", say("worker.http_status", { url: `${indexURL}pyodide.mjs`, status: response.status }));
  }
  const loader = await moduleURL(response);
  let core = "";
  try {
    const { loadPyodide } = await import(loader);
    // Pyodide would import() its core itself, which no fetch sees: fetch it (so it is kept), import it here
    const coreURL = indexURL + "pyodide.asm.mjs";
    const coreResponse = await fetch(coreURL);
    if (!coreResponse.ok) throw new Error(`Failed to load '${coreURL}': HTTP ${coreResponse.status}`);
    core = await moduleURL(coreResponse);
    const { default: createPyodideModule } = await import(core);
    const fileFailed = new Promise((_, reject) => { runtimeFetchFailed = reject; });
    fileFailed.catch(() => {});  // raced below; a failure after the runtime loaded is nobody's concern
    return await Promise.race([
      loadPyodide({ indexURL, packageBaseUrl: indexURL, createPyodideModule, stdout: () => {}, stderr: () => {} }),
      fileFailed,
    ]);
  } catch (error) {
    if (error instanceof StageError) throw error;
    const files = ["pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];
    throw await explain(config, files.map((name) => indexURL + name), [String(error?.message ?? error)]);
  } finally {
    runtimeFetchFailed = null;
    URL.revokeObjectURL(loader);
    if (core) URL.revokeObjectURL(core);
  }
}

/** A blob: URL of a fetched script, to import() it: Pyodide's files then come from this worker's fetch. */
async function moduleURL(response) {
  return URL.createObjectURL(new Blob([await response.text()], { type: "text/javascript" }));
}

/** Load one Pyodide package (with what it depends on); Pyodide reports a failure only to errorCallback. */
async function loadOne(config, names) {
  const errors = [];
  try {
    await pyodide.loadPackage(names, { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
  } catch (error) {
    errors.push(String(error?.message ?? error));
  }
  if (errors.length) throw await explain(config, names, errors);
}

function stages(config) {
  const list = [{ key: "runtime", stage: "runtime", label: "", work: async () => { pyodide = await loadRuntime(config); } }];
  for (const name of config.packages) {
    list.push({ key: `package:${name}`, stage: "package", label: name, work: () => loadOne(config, [name]) });
  }
  if (config.wheel) {
    list.push({ key: "course", stage: "course", label: config.module, work: async () => {
      await loadOne(config, [config.wheel]);
      try {
        pyodide.runPython(`import ${config.module}`);
      } catch (error) {
        throw new StageError("python", lastLine(error));
      }
    } });
  }
  return list;
}

async function boot(config) {
  texts = { ...texts, ...config.messages };
  keptFrom = [config.indexURL, config.wheel].filter(Boolean);
  const all = stages(config);
  const todo = all.filter(({ key }) => !done.has(key));
  for (const { key, stage, label, work } of todo) {
    post({ type: "progress", stage, label, step: all.indexOf(all.find((s) => s.key === key)) + 1, total: all.length });
    try {
      await work();
      done.add(key);
    } catch (error) {
      const known = error instanceof StageError;
      const other = known && error.package ? { stage: "package", label: error.package } : { stage, label };
      post({ type: "failed", ...other, cause: known ? error.cause : "python",
             reason: known ? error.message : String(error?.message ?? error) });
      return;
    }
  }
  post({ type: "ready" });
}

function lastLine(error) {
  const lines = String(error?.message ?? error).trim().split("\n");
  return lines[lines.length - 1];
}

function run({ id, source, params }) {
  const namespace = pyodide.globals.get("dict")();
  try {
    pyodide.runPython(source, { globals: namespace });
    namespace.set("_params_json", JSON.stringify(params));
    const json = pyodide.runPython(
      "import json as _json\n_json.dumps(run(**_json.loads(_params_json)), allow_nan=False)",
      { globals: namespace });
    post({ type: "result", id, json });
  } catch (error) {
    post({ type: "error", id, message: lastLine(error) });
  } finally {
    namespace.destroy();
  }
}

const HANDLERS = { files, boot, run };
self.onmessage = ({ data }) => HANDLERS[data.type]?.(data);
