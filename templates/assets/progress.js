// Course-wide progress kept in this browser only: units visited, reviews done, answers and scores,
// and each scored question's review schedule. Missing, old or corrupt storage is never fatal: it
// is read field by field and anything unexpected is dropped. Storage that cannot be read at all is
// kept aside, untouched, under CORRUPT_SUFFIX, so the page can say so and the learner can save it.
import { SCORE_LABELS } from "coursegen/constants.js";

export const FORMAT = "coursegen-progress";
export const VERSION = 1;
export const SCORES = Object.keys(SCORE_LABELS);  // yes, partly, no
const CARD_NUMBERS = ["stability", "difficulty", "elapsed_days", "scheduled_days", "learning_steps",
  "reps", "lapses", "state"];
const SAFE_URL = /^[a-z0-9]+(?:-[a-z0-9]+)*\.html(?:#[A-Za-z0-9_-]+)?$/;

const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);
// Lookups by slug or question id go through `own`: a plain object would answer `constructor` or
// `toString` from Object.prototype (a unit slugged `constructor` would show as visited).
const entries = (value) => (isObject(value) ? Object.entries(value).filter(([key]) => key !== "__proto__") : []);
export const own = (object, key) => (Object.hasOwn(object, key) ? object[key] : undefined);
const isDate = (value) => typeof value === "string" && !Number.isNaN(Date.parse(value));

export const CORRUPT_SUFFIX = ":corrupt";

/** Return the localStorage key of a course's progress. */
export function storageKey(course) {
  return `coursegen:progress:${course}`;
}

/** Return a fresh progress record for a course. */
export function emptyProgress(course, seed = randomSeed()) {
  return { format: FORMAT, version: VERSION, course, seed, visited: {}, reviews: {}, questions: {} };
}

function randomSeed() {
  const bytes = new Uint32Array(2);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (n) => n.toString(36)).join("");
}

/** Return a clean copy keeping only well-formed fields, or null when `data` is not our format. */
export function sanitize(data, course) {
  if (!isObject(data) || data.format !== FORMAT || data.version !== VERSION) return null;
  const clean = emptyProgress(course, typeof data.seed === "string" && data.seed.length <= 64 ? data.seed : undefined);
  for (const [slug, value] of entries(data.visited)) if (value === true) clean.visited[slug] = true;
  for (const [slug, value] of entries(data.reviews)) if (isObject(value) && value.done === true) clean.reviews[slug] = { done: true };
  for (const [key, value] of entries(data.questions)) {
    const record = sanitizeRecord(value);
    if (record) clean.questions[key] = record;
  }
  return clean;
}

/** Return a well-formed question record from stored data, or null. */
export function sanitizeRecord(value) {
  if (!isObject(value)) return null;
  const out = {};
  if (typeof value.text === "string") out.text = value.text.slice(0, 20000);
  if (value.aloud === true) out.aloud = true;
  if (typeof value.code === "string") out.code = value.code.slice(0, 20000);
  if (value.revealed === true) out.revealed = true;
  if (value.self === true) out.self = true;  // an exercise scored by the learner, Python being unavailable
  if (SCORES.includes(value.score)) out.score = value.score;
  if (Number.isInteger(value.choice) && value.choice >= 0) out.choice = value.choice;
  if (typeof value.prompt === "string") out.prompt = value.prompt.slice(0, 300);
  if (typeof value.url === "string" && SAFE_URL.test(value.url)) out.url = value.url;
  const card = sanitizeCard(value.card);
  if (card) out.card = card;
  return out;
}

function sanitizeCard(card) {
  if (!isObject(card) || !isDate(card.due)) return null;
  if (!CARD_NUMBERS.every((name) => Number.isFinite(card[name] ?? 0))) return null;
  const out = { due: card.due };
  for (const name of CARD_NUMBERS) out[name] = card[name] ?? 0;
  if (isDate(card.last_review)) out.last_review = card.last_review;
  return out;
}

/** Return localStorage when this page may use it, else null (private modes, blocked storage). */
export function browserStorage() {
  try {
    const storage = window.localStorage;
    storage.setItem("coursegen:probe", "1");
    storage.removeItem("coursegen:probe");
    return storage;
  } catch {
    return null;
  }
}

/** Return a store over one course's progress; without storage it lasts as long as the page. */
export function openStore(course, storage = browserStorage()) {
  const key = storageKey(course);
  const found = read(storage, key, course);
  let data = found.data ?? emptyProgress(course);
  if (found.unreadable) keepAside(storage, key + CORRUPT_SUFFIX, found.unreadable);
  const corrupt = () => { try { return storage?.getItem(key + CORRUPT_SUFFIX) ?? ""; } catch { return ""; } };
  const save = () => {
    try { storage?.setItem(key, JSON.stringify(data)); } catch { /* full or blocked: keep it in memory */ }
  };
  return {
    get data() { return data; },
    record: (id) => own(data.questions, id) ?? {},
    update(id, change) { data.questions[id] = { ...(own(data.questions, id) ?? {}), ...change }; save(); },
    clear(id) { delete data.questions[id]; save(); },
    visit(slug) { if (!own(data.visited, slug)) { data.visited[slug] = true; save(); } },
    markReview(slug, done) { if (done) data.reviews[slug] = { done: true }; else delete data.reviews[slug]; save(); },
    exportText: () => JSON.stringify(data, null, 2),
    /** The stored progress found unreadable (kept as it was), or "". */
    corruptText: corrupt,
    forgetCorrupt() { try { storage?.removeItem(key + CORRUPT_SUFFIX); } catch { /* blocked */ } },
    importText(text) {
      let parsed;
      try { parsed = JSON.parse(text); } catch { return false; }
      const clean = sanitize(parsed, course);
      if (!clean) return false;
      data = clean;
      save();
      return true;
    },
    due(now) {
      return Object.entries(data.questions)
        .filter(([, r]) => r.card && r.url && Date.parse(r.card.due) <= now.getTime())
        .map(([id, r]) => ({ id, url: r.url, prompt: r.prompt ?? id, due: r.card.due }))
        .sort((a, b) => a.due.localeCompare(b.due) || a.id.localeCompare(b.id));
    },
  };
}

/** Return {data} from storage (null when there is none), with `unreadable`: the stored text when it
 * is not progress at all (corrupt JSON, another format), so it is not lost when the fresh copy is saved. */
function read(storage, key, course) {
  let text = null;
  try {
    text = storage?.getItem(key);
  } catch {
    return { data: null };  // blocked storage: nothing to keep
  }
  if (!text) return { data: null };
  let parsed;
  try { parsed = JSON.parse(text); } catch { return { data: null, unreadable: text }; }
  const clean = sanitize(parsed, course);
  return clean ? { data: clean } : { data: null, unreadable: text };
}

function keepAside(storage, key, text) {
  try { storage?.setItem(key, text); } catch { /* full or blocked: the page still says so */ }
}
