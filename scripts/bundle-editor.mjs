// Bundle the exercise editor (scripts/editor-entry.js, CodeMirror 6 from node_modules) into one minified ES
// module, templates/assets/vendor/codemirror.js, and gather the licences of the packages it includes.
// Run after `npm ci`: `npm run bundle-editor`. Same inputs give the same bytes.
import { build } from "esbuild";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "templates/assets/vendor/codemirror.js");
const result = await build({
  entryPoints: [join(root, "scripts/editor-entry.js")], bundle: true, format: "esm", minify: true,
  target: "es2020", legalComments: "none", charset: "utf8", metafile: true, outfile: out,
  absWorkingDir: root,
  banner: { js: "/*! CodeMirror 6 and the packages it uses (MIT), bundled by scripts/bundle-editor.mjs; their"
    + " licence texts ship beside this file as vendor/codemirror.LICENSE.txt (under a content-hashed name). */" },
});

// Each package with a file in the bundle, with its licence text.
const packages = new Set();
for (const input of Object.keys(result.metafile.inputs)) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (match) packages.add(match[1]);
}
const sections = [...packages].sort().map((name) => {
  const dir = join(root, "node_modules", name);
  const { version, license } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const text = readFileSync(join(dir, "LICENSE"), "utf8").trim();
  return `${name} ${version} (${license})\n\n${text}\n`;
});
writeFileSync(join(root, "templates/assets/vendor/codemirror.LICENSE.txt"),
  "templates/assets/vendor/codemirror.js bundles these packages (scripts/bundle-editor.mjs):\n\n"
  + sections.join("\n" + "-".repeat(72) + "\n\n"));
