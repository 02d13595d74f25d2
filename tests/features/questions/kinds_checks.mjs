// Checks of the fill-in-the-blanks and ordering helpers, run by test_blanks_and_order.py under Node:
// `node kinds_checks.mjs <check name>` exits 0 when the check holds.
import assert from "node:assert/strict";
import { register } from "node:module";

register("./theme_modules.mjs", import.meta.url);
const blanks = await import("coursegen/review/blanks.js");
const order = await import("coursegen/review/order.js");
const progress = await import("coursegen/progress.js");

const checks = {
  "blanks follow the author's case rule"() {
    const spec = { case: "sensitive", spaces: "collapse", answers: [["Fade"]] };
    assert.deepEqual(blanks.marks(["Fade"], spec), [true]);
    assert.deepEqual(blanks.marks(["fade"], spec), [false]);
    assert.deepEqual(blanks.marks(["fade"], { ...spec, case: "insensitive" }), [true]);
  },
  "blanks follow the author's space rule"() {
    const spec = { case: "sensitive", spaces: "collapse", answers: [["x + 1"]] };
    assert.deepEqual(blanks.marks(["  x  +\t1 "], spec), [true]);
    assert.deepEqual(blanks.marks([" x + 1"], { ...spec, spaces: "exact" }), [false]);
    assert.deepEqual(blanks.marks(["x + 1"], { ...spec, spaces: "exact" }), [true]);
    assert.deepEqual(blanks.marks(["x+1"], { ...spec, spaces: "ignore" }), [true]);
    assert.deepEqual(blanks.marks(["x+1"], spec), [false]);
  },
  "any accepted answer counts and the score follows the marks"() {
    const spec = { case: "insensitive", spaces: "collapse", answers: [["fade", "decay"], ["erase"]] };
    assert.deepEqual(blanks.marks(["Decay", "erase"], spec), [true, true]);
    assert.equal(blanks.scoreOf(blanks.marks(["Decay", "erase"], spec)), "yes");
    assert.equal(blanks.scoreOf(blanks.marks(["decay", ""], spec)), "partly");
    assert.equal(blanks.scoreOf(blanks.marks(["write", "write"], spec)), "no");
  },
  "an order is right line by line, indents included for code"() {
    const right = [{ text: "def f():", level: 0 }, { text: "return 1", level: 1 }];
    assert.deepEqual(order.placesRight(right, right, true), [true, true]);
    assert.deepEqual(order.placesRight([right[0], { ...right[1], level: 0 }], right, true), [true, false]);
    assert.deepEqual(order.placesRight([right[0], { ...right[1], level: 0 }], right, false), [true, true]);
    assert.deepEqual(order.placesRight([right[1], right[0]], right, true), [false, false]);
    assert.equal(order.scoreOf([true, false]), "partly");
    assert.equal(order.scoreOf([false, false]), "no");
  },
  "lines of the same text are interchangeable"() {
    const right = [{ text: "a", level: 0 }, { text: "b", level: 0 }, { text: "a", level: 0 }];
    assert.deepEqual(order.placesRight([right[2], right[1], right[0]], right, true), [true, true, true]);
  },
  "stored blanks, orders and indents are read field by field"() {
    const clean = progress.sanitize({ format: "coursegen-progress", version: 1, questions: {
      "r/good": { blanks: ["fade", ""], order: [2, 0, 1], levels: [0, 1, 0] },
      "r/bad": { blanks: ["fade", 3], order: [1, -1], levels: [9] } } }, progress.courseOf({ title: "T" }, "/t/"));
    assert.deepEqual(clean.questions["r/good"], { blanks: ["fade", ""], order: [2, 0, 1], levels: [0, 1, 0] });
    assert.deepEqual(clean.questions["r/bad"], {});
  },
};

const name = process.argv[2];
if (!(name in checks)) { console.log(JSON.stringify(Object.keys(checks))); process.exit(name ? 2 : 0); }
await checks[name]();
