// A Node module hook doing what a page's import map does: "coursegen/<name>" is the theme's
// templates/assets/<name> (registered by progress_checks.mjs before it imports the theme's modules).
const assets = new URL("../../../templates/assets/", import.meta.url);

export async function resolve(specifier, context, nextResolve) {
  // the UI text's catalogue is made per course (coursegen/theme/messages.py): the test writes the English one
  if (specifier === "coursegen/messages.js") return { url: process.env.COURSEGEN_MESSAGES_JS, shortCircuit: true };
  if (specifier.startsWith("coursegen/")) {
    return { url: new URL(specifier.slice("coursegen/".length), assets).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
