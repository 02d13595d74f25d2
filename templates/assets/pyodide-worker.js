// Live Python for widgets, off the main thread (a module worker, as Pyodide requires): boots Pyodide, the
// Pyodide packages the page's widgets declare and the course's own package (a wheel) in stages, reporting
// each, then runs widget entries on request. Stages with nothing to load are left out.
// Messages in:  {type: "boot", indexURL, integrity, packages, wheel, module}, {type: "run", id, source, params}
// Messages out: {type: "progress", stage, step, total}, {type: "ready"}, {type: "failed", stage, reason},
//               {type: "result", id, json}, {type: "error", id, message}
let pyodide = null;
const post = (message) => self.postMessage(message);
const quiet = { messageCallback: () => {}, errorCallback: () => {} };  // failures surface as exceptions below

async function loadRuntime({ indexURL, integrity }) {
  // fetch with SRI, then import the checked text: a plain import() cannot check integrity
  const response = await fetch(indexURL + "pyodide.mjs", integrity ? { integrity } : {});
  if (!response.ok) throw new Error(`pyodide.mjs answered HTTP ${response.status}`);
  const url = URL.createObjectURL(new Blob([await response.text()], { type: "text/javascript" }));
  try {
    const { loadPyodide } = await import(url);
    return await loadPyodide({ indexURL, packageBaseUrl: indexURL, stdout: () => {}, stderr: () => {} });
  } finally {
    URL.revokeObjectURL(url);
  }
}

const STAGES = [
  ["runtime", () => true, async (config) => { pyodide = await loadRuntime(config); }],
  ["packages", (config) => config.packages.length > 0,
    async (config) => {
      const errors = [];  // loadPackage reports a package it could not load here, and carries on
      await pyodide.loadPackage(config.packages, { messageCallback: () => {}, errorCallback: (m) => errors.push(m) });
      if (errors.length) throw new Error(errors.join("; "));
    }],
  ["course", (config) => Boolean(config.wheel), async (config) => {
    await pyodide.loadPackage(config.wheel, quiet);
    pyodide.runPython(`import ${config.module}`);
  }],
];

async function boot(config) {
  const stages = STAGES.filter(([, needed]) => needed(config));
  for (const [index, [stage, , work]] of stages.entries()) {
    post({ type: "progress", stage, step: index + 1, total: stages.length });
    try {
      await work(config);
    } catch (error) {
      post({ type: "failed", stage, reason: String(error?.message ?? error) });
      return;
    }
  }
  post({ type: "ready" });
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
    const lines = String(error?.message ?? error).trim().split("\n");
    post({ type: "error", id, message: lines[lines.length - 1] });
  } finally {
    namespace.destroy();
  }
}

self.onmessage = ({ data }) => {
  if (data.type === "boot") boot(data);
  else if (data.type === "run") run(data);
};
