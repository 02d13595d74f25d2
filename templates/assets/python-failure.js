// What a failure of live Python says, for widgets (widgets.js) and exercises (review/exercise.js) alike: one
// plain sentence from the catalogue for the learner, and the technical reason (the stage, what failed, the
// worker's own detail such as a URL or "Failed to fetch") in a "Technical reason" disclosure and the console.
// The errors are python-client.js's: a stage, a label (a package's name), a cause and a message.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

// Why a boot stage failed (pyodide-worker.js's causes, and "too_long") and what failed to load (the
// runtime, a package, the course's package) make one whole sentence per pair, `live.<cause>.<subject>`:
// a sentence glued from "the … package" and "… is missing" reads wrongly in languages whose
// articles and prepositions change with the noun ("acceder a el intérprete").
const LOAD_FAILURE = {  // cause → what failed → its sentence's key (each key written out: tests find every key used)
  missing: { runtime: "live.missing.runtime", package: "live.missing.package", course: "live.missing.course" },
  http: { runtime: "live.http.runtime", package: "live.http.package", course: "live.http.course" },
  integrity: { runtime: "live.integrity.runtime", package: "live.integrity.package", course: "live.integrity.course" },
  unreachable: { runtime: "live.unreachable.runtime", package: "live.unreachable.package", course: "live.unreachable.course" },
  python: { runtime: "live.python.runtime", package: "live.python.package", course: "live.python.course" },
  too_long: { runtime: "live.too_long.runtime", package: "live.too_long.package", course: "live.too_long.course" },
};

/** Return one plain sentence saying why live Python failed (`runtime`: the page's runtime settings). */
export function failureText(error, runtime) {
  if (error.stage === "run") return t("live.raised", { error: error.message });
  if (error.stage === "worker") return t("live.worker_failed");
  if (error.stage === "timeout" && !error.during) return t("live.too_long_to_answer");
  const cause = error.stage === "timeout" ? "too_long" : error.cause in LOAD_FAILURE ? error.cause : "python";
  return t(LOAD_FAILURE[cause][error.during || error.stage], { package: error.label, module: runtime.module });
}

/** Return the technical reason: "package numpy missing: <the worker's detail>", "timeout package numpy: …". */
export function technicalReason(error, runtime) {
  return `${[error.stage, error.during, error.label, error.cause].filter(Boolean).join(" ")}: ${error.message}`;
}

/** Return a hidden "Technical reason" disclosure, the one partials/widget.html writes into each widget. */
export function reasonDisclosure() {
  return h("details", { class: "widget-reason", "data-live-detail": "", hidden: true },
    h("summary", {}, t("widget.technical_reason")), h("p", { "data-live-reason": "" }));
}

/** Put `reason` into a disclosure made like reasonDisclosure's and show it; say it in the console too. */
export function showReason(detail, reason, where) {
  detail.querySelector("[data-live-reason]").textContent = reason;
  detail.hidden = false;
  console.warn(`${where}: live Python: ${reason}`);
}
