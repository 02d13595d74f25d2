// Copy the math font from the pinned npm package @fontsource/noto-sans-math into the theme's assets,
// templates/assets/vendor/noto-sans-math.woff2, with its licence (SIL OFL 1.1) beside it.
// Run after `npm ci`: `npm run vendor-math-font`. The bytes are the package's, unchanged.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "node_modules/@fontsource/noto-sans-math");
const vendor = join(root, "templates/assets/vendor");
const { version, license } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));
copyFileSync(join(pkg, "files/noto-sans-math-latin-400-normal.woff2"), join(vendor, "noto-sans-math.woff2"));
writeFileSync(join(vendor, "noto-sans-math.LICENSE.txt"),
  `templates/assets/vendor/noto-sans-math.woff2 is Noto Sans Math from @fontsource/noto-sans-math ${version}`
  + ` (${license}), copied by scripts/vendor-math-font.mjs:\n\n${readFileSync(join(pkg, "LICENSE"), "utf8").trim()}\n`);
