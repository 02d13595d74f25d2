// The tally's buttons: reset this page's answers, export all course progress to a JSON file, and
// import such a file back. Imported files go through the same checks as stored progress, and another
// course's export is refused (progress.js, fromThisCourse).
import { h } from "coursegen/dom.js";
import { t } from "coursegen/messages.js";

// What an import says, by its outcome (progress.js, importText).
const IMPORTED = { imported: "tally.imported", not_progress: "tally.not_an_export", other_course: "tally.other_course" };

/** Wire the tally's action buttons and show them (they need JavaScript, so start hidden). */
export function mount(section, ctx) {
  const actions = section.querySelector("[data-tally-actions]");
  const status = section.querySelector("[data-tally-status]");
  const say = (text) => { status.textContent = text; };
  actions.hidden = false;
  const reset = section.querySelector("[data-tally-reset]");
  // Clearing cannot be undone, so it asks first, in place: the question and two answers replace the button.
  const confirm = h("button", { type: "button", "data-tally-reset-confirm": "" }, t("tally.clear"));
  const cancel = h("button", { type: "button", "data-tally-reset-cancel": "" }, t("tally.keep"));
  const ask = h("p", { class: "tally-confirm", hidden: true },
    `${t("tally.clear_question")} `, confirm, " ", cancel);
  reset.after(ask);
  const asking = (on) => { ask.hidden = !on; reset.hidden = on; (on ? cancel : reset).focus(); };
  reset.addEventListener("click", () => asking(true));
  cancel.addEventListener("click", () => { asking(false); say(t("tally.nothing_cleared")); });
  confirm.addEventListener("click", () => {
    ctx.reset();
    ctx.changed();
    asking(false);
    say(t("tally.cleared"));
  });
  section.querySelector("[data-tally-export]").addEventListener("click", () => {
    const blob = new Blob([ctx.store.exportText()], { type: "application/json" });
    const link = h("a", { href: URL.createObjectURL(blob), download: fileName(ctx.store.data.course) });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
    say(t("tally.exported"));
  });
  const input = section.querySelector("[data-tally-import]");
  const button = section.querySelector("[data-tally-import-button]");
  const chosen = section.querySelector("[data-tally-import-file]");
  button?.addEventListener("click", () => input.click());
  input.addEventListener("change", async () => {
    const file = input.files?.[0];
    if (!file) return;
    if (chosen) chosen.textContent = file.name;
    say(t("tally.import_reading", { file: file.name }));
    const outcome = ctx.store.importText(await file.text());
    input.value = "";
    if (outcome === "imported") ctx.reload();
    ctx.changed();
    if (chosen) chosen.dataset.outcome = outcome;
    say(t(IMPORTED[outcome]));
  });
}

/** Return the export's file name: the course title as a slug. */
export function fileName(course) {
  const slug = String(course).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  return `${slug || "course"}-progress.json`;
}
