// Course-wide progress kept in this browser only: units visited, reviews done, answers and scores,
// and each scored question's review schedule. Missing, old or corrupt storage is never fatal: it
// is read field by field and anything unexpected is dropped. Storage that cannot be read at all is
// kept aside, untouched, under CORRUPT_SUFFIX, so the page can say so and the learner can save it.
// Progress is kept under the course's identity (courseOf), never its title, which an author may correct.
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
/** The object a JSON text holds, or {} (for text that does not parse, or holds no object). */
function parsedObject(text) {
  try {
    const value = JSON.parse(text);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}

export const CORRUPT_SUFFIX = ":corrupt";
// Where progress was kept before courses had an identity: under the course title (moved on first load).
const TITLE_KEY_PREFIX = "coursegen:progress:";

/** Return the URL path of the site's root: the folder above assets/, where this module is served from. */
export function siteRoot() {
  return new URL("../", import.meta.url).pathname;
}

/**
 * Return a page's course: {title, identity, aliases, former}. The identity is `id:` of course.yaml when
 * it has one, else the site root's URL path (the origin already keeps sites apart; the path tells apart
 * two courses on one origin, such as two project pages of one GitHub user). `aliases` are identities it
 * had before (the path, for a course given an `id:` later); `former` the storage keys its progress may
 * still be under, moved to its own key on first load.
 */
export function courseOf({ title, id = "" }, root = siteRoot()) {
  const byPath = `path:${root}`;
  const aliases = id ? [byPath] : [];
  return { title, identity: id ? `id:${id}` : byPath, aliases,
    former: [...aliases.map(storageKey), TITLE_KEY_PREFIX + title] };
}

/** Return the localStorage key of a course's progress, by its identity. */
export function storageKey(identity) {
  return `coursegen:course:${identity}`;
}

/** Return whether parsed progress is this course's: by its identity; one of its aliases (another course
 * may have been served at that address before) or none at all (an export from before identities) also
 * needs this course's title. */
export function fromThisCourse(parsed, course) {
  if (parsed.identity === course.identity) return true;
  if (typeof parsed.identity === "string" && !course.aliases.includes(parsed.identity)) return false;
  return parsed.course === course.title;
}

/** Return a fresh progress record for a course (from courseOf). */
export function emptyProgress(course, seed = randomSeed()) {
  return { format: FORMAT, version: VERSION, course: course.title, identity: course.identity, seed,
    visited: {}, reviews: {}, questions: {} };
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

/** Return whether `value` is a list of at most 200 items that each pass `good`. */
const isList = (value, good) => Array.isArray(value) && value.length <= 200 && value.every(good);

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
  // A fill-in-the-blanks question's typed gaps; an ordering question's lines (by their right position) and indents.
  if (isList(value.blanks, (x) => typeof x === "string")) out.blanks = value.blanks.map((x) => x.slice(0, 500));
  if (isList(value.order, (x) => Number.isInteger(x) && x >= 0)) out.order = value.order;
  if (isList(value.levels, (x) => Number.isInteger(x) && x >= 0 && x <= 6)) out.levels = value.levels;
  if (Array.isArray(value.choices) && value.choices.length <= 100 && value.choices.every((n) => Number.isInteger(n) && n >= 0)) {
    out.choices = [...new Set(value.choices)].sort((a, b) => a - b);  // a select-all question's options
  }
  if (Number.isInteger(value.variant) && value.variant >= 0) out.variant = value.variant;  // a numeric one's numbers
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

/** Return localStorage when this page may read it, else null (storage switched off or blocked). A full
 * storage is still returned: what it holds can be read, and each save says whether it could write. */
export function browserStorage() {
  try {
    const storage = window.localStorage;
    storage.getItem("coursegen:probe");
    return storage;
  } catch {
    return null;
  }
}

/** Return a store over one course's progress (`course` from courseOf); without storage it lasts as long as
 * the page. `unsaved()` is called once, at the first save that storage refuses (full, switched off). */
export function openStore(course, storage = browserStorage(), { unsaved = () => {} } = {}) {
  const key = storageKey(course.identity);
  moveFormer(storage, key, course);
  const found = read(storage, key, course);
  let data = found.data ?? emptyProgress(course);
  if (found.unreadable) keepAside(storage, key + CORRUPT_SUFFIX, found.unreadable);
  const corrupt = () => { try { return storage?.getItem(key + CORRUPT_SUFFIX) ?? ""; } catch { return ""; } };
  let told = false;
  const refused = () => { if (!told) { told = true; unsaved(); } };
  const save = () => {
    if (!storage) { refused(); return; }
    try { storage.setItem(key, JSON.stringify(data)); } catch { refused(); /* kept in memory for this page */ }
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
    /** Replace the progress with an export's; return "imported", "not_progress" or "other_course"
     * (another course's export: nothing changes). */
    importText(text) {
      let parsed;
      try { parsed = JSON.parse(text); } catch { return "not_progress"; }
      const clean = sanitize(parsed, course);
      if (!clean) return "not_progress";
      if (!fromThisCourse(parsed, course)) return "other_course";
      data = clean;
      save();
      return "imported";
    },
    due(now) {
      return Object.entries(data.questions)
        .filter(([, r]) => r.card && r.url && Date.parse(r.card.due) <= now.getTime())
        .map(([id, r]) => ({ id, url: r.url, prompt: r.prompt ?? id, due: r.card.due }))
        .sort((a, b) => a.due.localeCompare(b.due) || a.id.localeCompare(b.id));
    },
  };
}

/** Return {key, text} of the progress this course left under a former key, or null. The title's key is
 * this course's by its name; an alias's key must hold this course's title. */
function formerRecord(storage, course) {
  const titleKey = course.former.at(-1);
  for (const key of course.former) {
    const text = storage.getItem(key);
    if (text !== null && (key === titleKey || fromThisCourse(parsedObject(text), course))) return { key, text };
  }
  return null;
}

/** Move progress kept under a former key (and the aside copy of the title's key) to `key` when `key` has none,
 * so no learner loses progress to an upgrade or a first `id:`. Storage that cannot write leaves it where it
 * is, and read() finds it there. */
function moveFormer(storage, key, course) {
  try {
    if (!storage || storage.getItem(key) !== null) return;
    const titleAside = course.former.at(-1) + CORRUPT_SUFFIX;
    const aside = storage.getItem(titleAside);
    if (aside !== null && storage.getItem(key + CORRUPT_SUFFIX) === null) {
      storage.setItem(key + CORRUPT_SUFFIX, aside);
      storage.removeItem(titleAside);
    }
    const found = formerRecord(storage, course);
    if (!found) return;
    storage.setItem(key, found.text);
    storage.removeItem(found.key);
  } catch { /* full or blocked */ }
}

/** Return {data} from storage (null when there is none; under a former key when it could not be moved), with
 * `unreadable`: the stored text when it is not progress at all (corrupt JSON, another format), so it is not
 * lost when the fresh copy is saved. */
function read(storage, key, course) {
  let text = null;
  try {
    text = storage && (storage.getItem(key) ?? formerRecord(storage, course)?.text);
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
