// Queries against a search index folder, run by test_forgiving_search.py under Node (no browser):
// `node search_checks.mjs <folder holding search/> <query> …` prints, as JSON, each query's results
// (the URLs of the sections found, best first) and the files the query fetched.
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";

const [folder, ...queries] = process.argv.slice(2);
const fetched = [];
globalThis.fetch = async (url) => {
  fetched.push(String(url));
  try {
    const text = await readFile(fileURLToPath(url), "utf8");
    return { ok: true, status: 200, json: async () => JSON.parse(text) };
  } catch {
    return { ok: false, status: 404, json: async () => null };
  }
};
const { openIndex } = await import(new URL("../../../templates/assets/search-index.js", import.meta.url).href);
const index = await openIndex(pathToFileURL(`${folder}/search/index.json`).href);
const site = pathToFileURL(`${folder}/`).href;
const answers = {};
for (const query of queries) {
  fetched.length = 0;
  const { hits } = await index.search(query, { shown: 20, pages: 8 });
  answers[query] = {
    urls: hits.map((hit) => hit.url.slice(site.length)),
    marked: hits.map((hit) => hit.excerpt.filter(([, on]) => on).map(([text]) => text)),
  };
}
process.stdout.write(JSON.stringify(answers));
