// Checks of the browser-side store and helpers, run by test_progress_store.py under Node:
// `node progress_checks.mjs <check name>` exits 0 when the check holds.
import assert from "node:assert/strict";
import { register } from "node:module";

register("./theme_modules.mjs", import.meta.url);  // the theme's modules import one another as "coursegen/…"
const progress = await import("coursegen/progress.js");
const schedule = await import("coursegen/review/schedule.js");
const choice = await import("coursegen/review/choice.js");
const tally = await import("coursegen/review/tally.js");
const fsrs = await import("coursegen/vendor/ts-fsrs.js");
const marks = await import("coursegen/review/marks.js");
const session = await import("coursegen/review/session.js");
globalThis.document ??= { baseURI: "http://127.0.0.1/course/page.html" };  // python-client.js makes URLs absolute
const { PythonClient } = await import("coursegen/python-client.js");

/** A stand-in for pyodide-worker.js: it records what it is sent and answers as `script` says. */
function fakeWorker(script, made) {
  return (url) => {
    const worker = { url, sent: [], terminated: false, onmessage: null, onerror: null,
      postMessage(message) { worker.sent.push(message); script(message, (data) => worker.onmessage?.({ data })); },
      terminate() { worker.terminated = true; } };
    made.push(worker);
    return worker;
  };
}
const later = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const RUNTIME = { worker: "assets/pyodide-worker.js", indexURL: "pyodide/", integrity: "", wheel: "", module: "" };

function memoryStorage(initial = {}) {
  const items = { ...initial };
  return { items, getItem: (k) => items[k] ?? null, setItem: (k, v) => { items[k] = String(v); }, removeItem: (k) => { delete items[k]; } };
}

const C = progress.courseOf({ title: "C" }, "/c/");
const KEY = progress.storageKey(C.identity);
const checks = {
  "the review session asks the due questions one unit after another, in the same order every time"() {
    const item = (id) => ({ id, url: `${id.replace("/", ".html#")}`, prompt: id, due: "2026-01-01T00:00:00.000Z" });
    const due = ["kda/a", "kda/b", "kda/c", "review-a/x", "depth/p", "review-a/y"].map(item);
    const order = session.interleaved(due).map((found) => found.id);
    assert.deepEqual(order, ["kda/a", "review-a/x", "depth/p", "kda/b", "review-a/y", "kda/c"]);
    assert.deepEqual(session.interleaved(due).map((found) => found.id), order);
    assert.deepEqual(session.interleaved([]), []);
  },
  "a unit or question named like an Object.prototype member starts unvisited and unanswered"() {
    const store = progress.openStore(C, memoryStorage());
    for (const name of ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"]) {
      assert.deepEqual(store.record(name), {});
    }
    let saved = 0;
    const counting = { ...memoryStorage(), setItem: () => { saved += 1; } };
    progress.openStore(C, counting).visit("constructor");
    assert.equal(saved, 1, "visiting 'constructor' records a visit instead of finding one already there");
    const clean = progress.sanitize(JSON.parse('{"format":"coursegen-progress","version":1,' +
      '"questions":{"__proto__":{"score":"yes"}},"visited":{"__proto__":true}}'), C);
    assert.equal(Object.getPrototypeOf(clean.questions), Object.prototype);
    assert.equal(progress.openStore(C, memoryStorage()).record("toString").score, undefined);
  },
  "the course map marks no unit slugged like an Object.prototype member in a fresh browser"() {
    const marked = [];
    const item = (unit) => ({ dataset: { unit }, querySelector: () => null, append() {},
      classList: { toggle: (name, on) => { if (on) marked.push(unit); } } });
    const root = { querySelectorAll: () => ["constructor", "toString", "kda"].map(item) };
    const data = progress.emptyProgress(C);
    data.visited.kda = true;
    // the one DOM call markUnits makes for a marked unit (through dom.js's h)
    globalThis.document = { createElement: () => ({ setAttribute() {}, append() {} }) };
    marks.markUnits(root, data);
    assert.deepEqual(marked, ["kda"]);
  },
  "a store saves answers and reads them back"() {
    const storage = memoryStorage();
    progress.openStore(C, storage).update("r/q", { text: "typed", score: "partly" });
    assert.deepEqual(progress.openStore(C, storage).record("r/q"), { text: "typed", score: "partly" });
  },
  "an exercise's code is kept, exported and imported as text only"() {
    const first = progress.openStore(C, memoryStorage());
    first.update("l/ex", { code: "def f(x):\n    return x\n", revealed: true, score: "yes" });
    const second = progress.openStore(C, memoryStorage());
    assert.equal(second.importText(first.exportText()), "imported");
    assert.equal(second.record("l/ex").code, "def f(x):\n    return x\n");
    const clean = progress.sanitizeRecord({ code: { evil: true } });
    assert.equal(clean.code, undefined);
    assert.equal(progress.sanitizeRecord({ code: "x".repeat(30000) }).code.length, 20000);
  },
  "corrupt or foreign storage starts afresh"() {
    for (const bad of ["{oops", "[]", '{"format":"coursegen-progress","version":0}', '"text"']) {
      const store = progress.openStore(C, memoryStorage({ [KEY]: bad }));
      assert.deepEqual(store.data.questions, {});
    }
  },
  "malformed fields are dropped and unsafe urls refused"() {
    const clean = progress.sanitize({ format: "coursegen-progress", version: 1, visited: { a: true, b: "yes" },
      questions: { "r/q": { score: "maybe", url: "javascript:alert(1)", text: 5, choice: -1, card: { due: "soon" } },
        "r/ok": { score: "no", url: "kda.html#fade-erase-write", revealed: true } } }, C);
    assert.deepEqual(clean.visited, { a: true });
    assert.deepEqual(clean.questions["r/q"], {});
    assert.deepEqual(clean.questions["r/ok"], { score: "no", url: "kda.html#fade-erase-write", revealed: true });
  },
  "an import that is not a progress export changes nothing"() {
    const store = progress.openStore(C, memoryStorage());
    store.update("r/q", { score: "yes" });
    assert.equal(store.importText('{"format":"other"}'), "not_progress");
    assert.equal(store.importText("not json"), "not_progress");
    assert.equal(store.record("r/q").score, "yes");
  },
  "an export imports back into an empty store"() {
    const first = progress.openStore(C, memoryStorage());
    first.update("r/q", { text: "answer", score: "no" });
    const second = progress.openStore(C, memoryStorage());
    assert.equal(second.importText(first.exportText()), "imported");
    assert.deepEqual(second.data, first.data);
  },
  "a course is known by its id, else by its site root's path, never by its title"() {
    assert.equal(progress.courseOf({ title: "T", id: "bread-1" }, "/a/").identity, "id:bread-1");
    assert.equal(progress.courseOf({ title: "T Renamed", id: "bread-1" }, "/b/").identity, "id:bread-1");
    assert.equal(progress.courseOf({ title: "T" }, "/a/").identity, "path:/a/");
    assert.notEqual(progress.storageKey(progress.courseOf({ title: "T" }, "/a/").identity),
      progress.storageKey(progress.courseOf({ title: "T" }, "/b/").identity));
    const stored = memoryStorage();
    progress.openStore(progress.courseOf({ title: "T", id: "x" }, "/a/"), stored).update("r/q", { score: "yes" });
    const renamed = progress.openStore(progress.courseOf({ title: "New T", id: "x" }, "/a/"), stored);
    assert.equal(renamed.record("r/q").score, "yes");
    assert.equal(renamed.data.course, "New T");
  },
  "progress kept under the title moves to the course's key once, raw, with its damaged copy"() {
    const record = JSON.stringify({ format: "coursegen-progress", version: 1, course: "C", questions: { "r/q": { score: "no" } } });
    const storage = memoryStorage({ "coursegen:progress:C": record, "coursegen:progress:C:corrupt": "{bad" });
    const store = progress.openStore(C, storage);
    assert.equal(store.record("r/q").score, "no");
    assert.equal(storage.items[KEY], record);
    assert.equal(storage.items[KEY + progress.CORRUPT_SUFFIX], "{bad");
    assert.deepEqual(Object.keys(storage.items).filter((k) => k.startsWith("coursegen:progress:")), []);
    storage.items["coursegen:progress:C"] = record.replace("no", "yes");  // an old page wrote it again: ours wins
    assert.equal(progress.openStore(C, storage).record("r/q").score, "no");
  },
  "a course given an id takes over the progress of its address only when that holds its title"() {
    const mine = JSON.stringify({ format: "coursegen-progress", version: 1, course: "C", identity: "path:/c/",
      questions: { "r/q": { score: "partly" } } });
    const withId = progress.courseOf({ title: "C", id: "c-1" }, "/c/");
    const storage = memoryStorage({ [KEY]: mine });
    assert.equal(progress.openStore(withId, storage).record("r/q").score, "partly");
    assert.equal(storage.items[KEY], undefined);
    const other = memoryStorage({ [KEY]: mine.replace('"course":"C"', '"course":"Another"') });
    assert.equal(progress.openStore(withId, other).record("r/q").score, undefined);
    assert.ok(other.items[KEY], "another course's progress stays where it was");
  },
  "an export of another course is refused and nothing changes; one from before identities needs the title"() {
    const here = progress.openStore(C, memoryStorage());
    here.update("r/q", { score: "yes" });
    const elsewhere = progress.openStore(progress.courseOf({ title: "C" }, "/other/"), memoryStorage());
    elsewhere.update("r/q", { score: "no" });
    const byId = progress.openStore(progress.courseOf({ title: "C", id: "x" }, "/c/"), memoryStorage());
    assert.equal(here.importText(elsewhere.exportText()), "other_course");
    assert.equal(here.importText(byId.exportText()), "other_course");
    assert.equal(here.record("r/q").score, "yes");
    const old = (course) => JSON.stringify({ format: "coursegen-progress", version: 1, course,
      questions: { "r/q": { score: "partly" } } });
    assert.equal(here.importText(old("Another")), "other_course");
    assert.equal(here.record("r/q").score, "yes");
    assert.equal(here.importText(old("C")), "imported");
    assert.equal(here.record("r/q").score, "partly");
    assert.equal(JSON.parse(here.exportText()).identity, "path:/c/");
  },
  "storage that refuses to save is said once, and the progress lasts in memory"() {
    let told = 0;
    const full = { ...memoryStorage(), setItem() { throw new DOMException("full", "QuotaExceededError"); } };
    const store = progress.openStore(C, full, { unsaved: () => { told += 1; } });
    assert.equal(told, 0, "nothing is said before anything is saved");
    store.visit("a");
    store.update("r/q", { score: "yes" });
    assert.equal(told, 1);
    assert.equal(store.record("r/q").score, "yes");
    let blocked = 0;
    progress.openStore(C, null, { unsaved: () => { blocked += 1; } }).visit("a");
    assert.equal(blocked, 1, "no storage at all is said too");
  },
  "questions are due once their date has passed, oldest first"() {
    const store = progress.openStore(C, memoryStorage());
    store.update("r/a", { url: "r.html#q-a", prompt: "A", card: { due: "2026-01-03T00:00:00.000Z" } });
    store.update("r/b", { url: "r.html#q-b", prompt: "B", card: { due: "2026-01-02T00:00:00.000Z" } });
    store.update("r/c", { url: "r.html#q-c", prompt: "C", card: { due: "2026-02-01T00:00:00.000Z" } });
    assert.deepEqual(store.due(new Date("2026-01-05T00:00:00Z")).map((d) => d.prompt), ["B", "A"]);
  },
  "fsrs spaces a no, a partly and a yes one, two and three days out"() {
    const scheduler = schedule.makeScheduler(fsrs);
    const now = new Date("2026-01-01T00:00:00Z");
    const days = ["no", "partly", "yes"].map((s) => (Date.parse(scheduler.next(null, s, now).due) - now) / 864e5);
    assert.deepEqual(days, [1, 2, 3]);
    const again = scheduler.next(scheduler.next(null, "yes", now), "yes", new Date("2026-01-04T00:00:00Z"));
    assert.ok(Date.parse(again.due) - Date.parse("2026-01-04T00:00:00Z") > 3 * 864e5, "a second yes waits longer");
  },
  "the shuffle is a stable permutation that depends on the seed"() {
    const items = ["a", "b", "c", "d", "e"];
    const once = choice.stableShuffle(items, "seed-1:r/q");
    assert.deepEqual(choice.stableShuffle(items, "seed-1:r/q"), once);
    assert.deepEqual([...once].sort(), items);
    const orders = new Set(["s1", "s2", "s3", "s4"].map((s) => choice.stableShuffle(items, s).join("")));
    assert.ok(orders.size > 1);
  },
  "the tally counts per lesson and topic and names only no and partly for revisiting"() {
    const q = (lessons, topic, revisit) => ({ dataset: { lessons, topic, revisit } });
    const questions = [q("1 2", "gas", "a.html#x"), q("2", "", "b.html#y"), q("3", "gas", "")];
    const scores = new Map([[questions[0], "partly"], [questions[1], "yes"]]);
    const result = tally.count(questions, (item) => ({ score: scores.get(item) }));
    assert.deepEqual(result.totals, { answered: 2, yes: 1, partly: 1, no: 0 });
    assert.deepEqual([...result.rows.keys()], ["lesson:1", "lesson:2", "lesson:3", "topic:gas"]);
    assert.deepEqual(result.rows.get("topic:gas"), { yes: 0, partly: 1, no: 0, open: 1 });
    assert.deepEqual([...result.revisit.lessons], ["1", "2"]);
    assert.deepEqual([...result.revisit.sections], ["a.html#x"]);
  },
  async "the Python client boots once, sends the packages and worker texts, and runs entries"() {
    const made = [];
    const script = (message, answer) => {
      if (message.type === "boot") answer({ type: "ready" });
      if (message.type === "run") answer({ type: "result", id: message.id, json: JSON.stringify(message.params.n * 2) });
    };
    const packages = new Set(["numpy"]);
    const client = new PythonClient(RUNTIME, () => [...packages].sort(), { run: 1000 }, fakeWorker(script, made));
    packages.add("micropip");  // read when the boot starts, as exercises add theirs while the page starts
    assert.equal(await client.run("def run(n): ...", { n: 21 }), 42);
    assert.equal(await client.run("def run(n): ...", { n: 2 }), 4);
    assert.equal(made.length, 1, "one worker for every run");
    const boot = made[0].sent.filter((m) => m.type === "boot");
    assert.equal(boot.length, 1);
    assert.deepEqual(boot[0].packages, ["micropip", "numpy"]);
    assert.equal(boot[0].indexURL, "http://127.0.0.1/course/pyodide/");
    assert.equal(boot[0].messages["worker.http_status"], "{url} answered HTTP {status}");
  },
  async "a run past its limit replaces the worker; a run waiting on it is told it was restarted"() {
    const made = [];
    const script = (message, answer) => {
      if (message.type === "boot") answer({ type: "file", file: { url: "http://x/pyodide.asm.wasm", bytes: 1 } });
      if (message.type === "boot") answer({ type: "ready" });  // runs never answer
    };
    const client = new PythonClient(RUNTIME, [], { run: 40 }, fakeWorker(script, made));
    const first = client.run("loop", {}).catch((error) => error);
    await later(10);
    const second = client.run("other", {}).catch((error) => error);
    const [late, waiting] = await Promise.all([first, second]);
    assert.equal(late.stage, "timeout");
    assert.equal(late.restarted, false);
    assert.equal(late.message, "no answer after 0.04 s");
    assert.equal(waiting.restarted, true, "the other run ends with the worker");
    assert.equal(made[0].terminated, true);
    client.run("again", {}).catch(() => {});
    await later(0);
    assert.equal(made.length, 2, "the next run starts a new worker");
    assert.equal(made[1].sent[0].type, "files", "which is handed the files the first one fetched");
    assert.equal(made[1].sent[0].files[0].url, "http://x/pyodide.asm.wasm");
  },
  async "a per-stage limit is armed again as each stage starts; a whole-boot limit is not"() {
    const stages = (message, answer) => {  // three stages of 30 ms each, then ready
      if (message.type !== "boot") return;
      ["runtime", "package", "course"].forEach((stage, i) => setTimeout(() => answer({ type: "progress", stage,
        label: stage === "package" ? "numpy" : "", step: i + 1, total: 3 }), i * 30));
      setTimeout(() => answer({ type: "ready" }), 90);
    };
    const perStage = new PythonClient(RUNTIME, [], { stage: 50, run: 1000 }, fakeWorker(stages, []));
    await perStage.boot();  // 90 ms in all, never 50 ms in one stage
    const made = [];
    const whole = new PythonClient(RUNTIME, [], { boot: 50, run: 1000 }, fakeWorker(stages, made));
    const error = await whole.boot().catch((e) => e);
    assert.equal(error.stage, "timeout");
    assert.equal(error.during, "package", "the stage under way when the whole boot ran out of time");
    assert.equal(error.label, "numpy");
    assert.equal(made[0].terminated, true, "a boot out of time replaces the worker");
    const slow = new PythonClient(RUNTIME, [], { stage: 20, run: 1000 }, fakeWorker(stages, []));
    const stalled = await slow.boot().catch((e) => e);
    assert.equal(stalled.during, "runtime");
  },
  async "a failed boot stage resumes in the same worker, with its cause and label"() {
    const made = [];
    let tries = 0;
    const script = (message, answer) => {
      if (message.type !== "boot") return;
      tries += 1;
      if (tries === 1) answer({ type: "failed", stage: "package", label: "numpy", cause: "missing", reason: "HTTP 404" });
      else answer({ type: "ready" });
    };
    const client = new PythonClient(RUNTIME, ["numpy"], { stage: 1000, run: 1000 }, fakeWorker(script, made));
    const error = await client.boot().catch((e) => e);
    assert.deepEqual([error.stage, error.label, error.cause, error.message], ["package", "numpy", "missing", "HTTP 404"]);
    await client.boot();
    assert.equal(made.length, 1, "the retry resumes in the worker that failed");
  },
};

const name = process.argv[2];
if (!(name in checks)) { console.log(JSON.stringify(Object.keys(checks))); process.exit(name ? 2 : 0); }
await checks[name]();
