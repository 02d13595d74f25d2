// Live Python for widgets, off the main thread (a module worker, as Pyodide requires): boots Pyodide, numpy/ml_dtypes and the course's
// kernels wheel in stages (reporting each), then runs widget entries on request.
// Messages in:  {type: "boot", indexURL, integrity, kernels}, {type: "run", id, source, params}
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
  ["runtime", async (config) => { pyodide = await loadRuntime(config); }],
  ["numpy", async () => {
    await pyodide.loadPackage(["numpy", "ml-dtypes"], quiet);
    pyodide.runPython("import numpy, ml_dtypes");
  }],
  ["kernels", async (config) => {
    await pyodide.loadPackage(config.kernels, quiet);
    pyodide.runPython("import kernels");
  }],
];

async function boot(config) {
  for (const [index, [stage, work]] of STAGES.entries()) {
    post({ type: "progress", stage, step: index + 1, total: STAGES.length });
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
