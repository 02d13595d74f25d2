// Checks of the select-all and numeric helpers, run by test_numeric_checks.py under Node:
// `node numeric_checks.mjs <check name>` exits 0 when the check holds.
import assert from "node:assert/strict";
import { register } from "node:module";

register("./theme_modules.mjs", import.meta.url);  // the theme's modules import one another as "coursegen/…"
const progress = await import("coursegen/progress.js");
const multiple = await import("coursegen/review/multiple.js");
const numeric = await import("coursegen/review/numeric.js");

const checks = {
  "a select-all answer is yes only for exactly the right set, partly for some, no for none"() {
    assert.equal(multiple.scoreOf([0, 2], [0, 2]), "yes");
    assert.equal(multiple.scoreOf([0], [0, 2]), "partly");
    assert.equal(multiple.scoreOf([0, 1, 2], [0, 2]), "partly");
    assert.equal(multiple.scoreOf([1, 3], [0, 2]), "no");
  },
  "a learner's number is read in the course's notation"() {
    const read = (text, mark = ".") => numeric.readAnswer(text, mark);
    assert.deepEqual(read("1e-3"), { value: 0.001, unit: "" });
    assert.deepEqual(read("0.001 g"), { value: 0.001, unit: "g" });
    assert.deepEqual(read("1.5 × 10^3 nats"), { value: 1500, unit: "nats" });
    assert.deepEqual(read("3.39 × 10³⁸"), { value: 3.39e38, unit: "" });
    assert.deepEqual(read("\u22125"), { value: -5, unit: "" });
    assert.deepEqual(read("1,024"), { value: 1024, unit: "" });
    assert.deepEqual(read("1 024 bytes"), { value: 1024, unit: "bytes" });
    assert.deepEqual(read("0,001"), { error: "number" }, "a decimal comma is no number in English");
    assert.deepEqual(read("0,001", ","), { value: 0.001, unit: "" });
    assert.deepEqual(read("1.234,5", ","), { value: 1234.5, unit: "" });
    assert.deepEqual(read("0.5", ","), { value: 0.5, unit: "" }, "a point is a decimal point in every language");
    assert.deepEqual(read("about five"), { error: "number" });
    assert.deepEqual(read("1..2"), { error: "number" });
    assert.deepEqual(read("2.5eV"), { value: 2.5, unit: "eV" });
  },
  "a number within the tolerance is right, within close is partly, beyond is wrong"() {
    const variant = { answer: 88.7189252124, limit: 0.005, close: 0.5 };
    assert.equal(numeric.scoreOf(88.72, variant), "yes");
    assert.equal(numeric.scoreOf(88.7139252124, variant), "yes", "the limit itself counts");
    assert.equal(numeric.scoreOf(88.9, variant), "partly");
    assert.equal(numeric.scoreOf(90, variant), "no");
    assert.equal(numeric.scoreOf(88.9, { answer: 88.7189252124, limit: 0.005 }), "no", "no close: no partly");
  },
  "a variant is kept with its answer, and each review moves to the next"() {
    const fresh = numeric.variantOf({}, 6, "seed:page/q");
    assert.ok(fresh >= 0 && fresh < 6);
    assert.equal(numeric.variantOf({ variant: 4 }, 6, "seed:page/q"), 4);
    assert.equal(numeric.variantOf({ card: { reps: 1 } }, 6, "seed:page/q"), (fresh + 1) % 6);
    assert.equal(numeric.variantOf({ variant: 9 }, 6, "seed:page/q"), fresh, "a stale index is drawn afresh");
  },
  "select-all choices and a variant are stored, exported and malformed ones dropped"() {
    assert.deepEqual(progress.sanitizeRecord({ choices: [2, 0, 2], variant: 3, score: "partly" }),
      { choices: [0, 2], variant: 3, score: "partly" });
    assert.deepEqual(progress.sanitizeRecord({ choices: [0, -1], variant: 1.5 }), {});
    assert.deepEqual(progress.sanitizeRecord({ choices: "0,1", variant: "2" }), {});
  },
};

const name = process.argv[2];
if (!(name in checks)) { console.log(JSON.stringify(Object.keys(checks))); process.exit(name ? 2 : 0); }
await checks[name]();
