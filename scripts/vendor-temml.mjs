// Copy Temml (LaTeX → MathML) from the pinned npm package `temml` into the engine,
// coursegen/features/math/vendor/temml.min.js, with its licence (MIT) beside it. The wheel carries
// both, so a pip-installed coursegen needs no Node; the build runs the file in embedded V8 (mini-racer).
// Run after `npm ci`: `npm run vendor-temml`. The bytes are the package's, unchanged.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "node_modules/temml");
const vendor = join(root, "coursegen/features/math/vendor");
const { version, license } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
copyFileSync(join(pkg, "dist/temml.min.js"), join(vendor, "temml.min.js"));
writeFileSync(join(vendor, "temml.LICENSE.txt"),
  `coursegen/features/math/vendor/temml.min.js is Temml ${version} (${license}), from the npm package temml,`
  + ` copied by scripts/vendor-temml.mjs:\n\n${readFileSync(join(pkg, "LICENSE"), "utf8").trim()}\n`);
