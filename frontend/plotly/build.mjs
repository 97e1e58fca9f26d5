// Builds static/plotly/ from src/: `npm ci && node build.mjs` (docs/architecture.md, "Charts"). The settings are plotly.js's own
// (its esbuild-config.js), as ES modules split into the core and the 3D traces.
import { readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import * as esbuild from "esbuild";

const require = createRequire(import.meta.url);
const { environmentPlugin } = require("esbuild-plugin-environment");
const { glsl } = require("esbuild-plugin-glsl");
const inlineCss = require("esbuild-plugin-inline-css");

const outdir = new URL("../../static/plotly/", import.meta.url).pathname;
for (const old of readdirSync(outdir).filter((name) => name.endsWith(".js"))) {
  rmSync(outdir + old);  // the last build's files (theme.json is scripts/chart_theme.py's)
}
await esbuild.build({
  entryPoints: ["src/plotly.js"],
  outdir,
  format: "esm",
  splitting: true,
  bundle: true,
  minify: true,
  legalComments: "eof",
  banner: { js: "/* plotly.js 4.1.1 (MIT License, Copyright Plotly, Inc.): BERT Lens's build, frontend/plotly */" },
  plugins: [inlineCss(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
  alias: { regl: "@plotly/regl", stream: "stream-browserify" },
  define: { global: "window", "define.amd": "false" },
  target: "es2020",
  logLevel: "warning",
});
