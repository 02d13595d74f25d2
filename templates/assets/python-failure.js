// What a failure of live Python says, for widgets (widgets.js) and exercises (review/exercise.js) alike: one
// plain sentence from the catalogue for the learner, and the technical reason (the stage, what failed, the
// worker's own detail such as a URL or "Failed to fetch") in a "Technical reason" disclosure and the console.
// The errors are python-client.js's: a stage, a label (a package's name), a cause and a message.
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

const SUBJECT = {
  runtime: () => t("live.the_runtime"),
  package: (runtime, label) => t("live.the_package", { package: label }),
  course: (runtime) => t("live.the_course_package", { module: runtime.module }),
};
const CAUSE_TEXT = {  // a boot stage's cause (pyodide-worker.js) → its sentence's key
  missing: "live.cause_missing",
  http: "live.cause_http",
  integrity: "live.cause_integrity",
  unreachable: "live.cause_unreachable",
  python: "live.cause_python",
};

/** Return one plain sentence saying why live Python failed (`runtime`: the page's runtime settings). */
export function failureText(error, runtime) {
  if (error.stage === "run") return t("live.raised", { error: error.message });
  if (error.stage === "worker") return t("live.worker_failed");
  if (error.stage === "timeout") {
    return error.during ? t("live.too_long_to_load", { subject: subjectOf(error, runtime) }) : t("live.too_long_to_answer");
  }
  return t(CAUSE_TEXT[error.cause] ?? CAUSE_TEXT.python, { subject: subjectOf(error, runtime) });
}

/** Return what failed to load, in words: "the Python runtime", "the numpy package", "the course's kernels package". */
export function subjectOf(error, runtime) {
  return SUBJECT[error.during || error.stage](runtime, error.label);
}

/** Return the technical reason: "package numpy missing: <the worker's detail>". */
export function technicalReason(error, runtime) {
  const label = error.stage === "timeout" && error.during ? subjectOf(error, runtime) : error.label;
  return `${[error.stage, label, error.cause].filter(Boolean).join(" ")}: ${error.message}`;
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
