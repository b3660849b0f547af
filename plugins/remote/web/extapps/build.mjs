// build.mjs bundles the MCP Apps host bridge for the management page: the app-bridge entry
// point of @modelcontextprotocol/ext-apps (AppBridge, PostMessageTransport and the helpers
// the page uses) with what it imports (the MCP client's Protocol, the core schemas, zod),
// into one script that defines the global ExtAppsBridge, and writes the licences of every
// package that ends up in it beside it. The versions are the ones package-lock.json pins.
//
//   npm ci --prefix plugins/remote/web/extapps --no-audit --no-fund
//   node plugins/remote/web/extapps/build.mjs           # writes ../static/vendor/
//   node plugins/remote/web/extapps/build.mjs --check   # fails when the committed files differ
//
// .ci/run runs the --check form, so the committed bundle is what this script makes from
// the pinned packages.
import { build } from "esbuild";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const vendor = join(here, "..", "static", "vendor");
const outJS = join(vendor, "ext-apps-bridge.js");
const outLicences = join(vendor, "ext-apps-bridge.LICENSES.txt");
const check = process.argv.includes("--check");

const pkg = (name) => JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8"));
const extApps = pkg("@modelcontextprotocol/ext-apps");

const result = await build({
  stdin: {
    contents: 'export { AppBridge, PostMessageTransport, getToolUiResourceUri, buildAllowAttribute, ' +
      'isToolVisibilityAppOnly, isToolVisibilityModelOnly, RESOURCE_MIME_TYPE, LATEST_PROTOCOL_VERSION } ' +
      'from "@modelcontextprotocol/ext-apps/app-bridge";',
    resolveDir: here,
    sourcefile: "entry.js",
  },
  bundle: true,
  format: "iife",
  globalName: "ExtAppsBridge",
  platform: "browser",
  target: "es2022",
  minify: true,
  legalComments: "none",
  metafile: true,
  write: false,
  logLevel: "warning",
});

// The packages whose code is in the bundle: the output's inputs that left bytes in it
// (node_modules/NAME or node_modules/@SCOPE/NAME), each with its version and licence text.
const names = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m && bytesInOutput > 0) names.add(m[1]);
  }
}
const packages = [...names].sort().map((name) => {
  const p = pkg(name);
  const dir = join(here, "node_modules", name);
  const file = ["LICENSE", "LICENSE.md", "LICENSE.txt", "license"].map((f) => join(dir, f)).find((f) => existsSync(f));
  if (!file) throw new Error(`${name}@${p.version}: no licence file`);
  return { name, version: p.version, license: p.license, text: readFileSync(file, "utf8").trim() };
});

const banner = `/*! ExtAppsBridge: the host side of MCP Apps, @modelcontextprotocol/ext-apps ${extApps.version} (app-bridge), ` +
  `bundled by plugins/remote/web/extapps/build.mjs with ${packages.filter((p) => p.name !== extApps.name)
    .map((p) => p.name + " " + p.version).join(", ")}. ` +
  `Licences (${[...new Set(packages.map((p) => p.license))].join(", ")}): ext-apps-bridge.LICENSES.txt beside this file. */\n`;
const js = banner + result.outputFiles[0].text;
const licences = "The licences of the packages bundled into ext-apps-bridge.js.\n\n" +
  packages.map((p) => `== ${p.name} ${p.version} (${p.license})\n\n${p.text}\n`).join("\n");

if (check) {
  const same = (file, want) => existsSync(file) && readFileSync(file, "utf8") === want;
  const stale = [[outJS, js], [outLicences, licences]].filter(([f, w]) => !same(f, w)).map(([f]) => f);
  if (stale.length) {
    console.error(`build.mjs --check: ${stale.join(", ")} differ from what the pinned packages make; run node plugins/remote/web/extapps/build.mjs and commit`);
    process.exit(1);
  }
  console.log(`build.mjs --check: the vendored bridge is ext-apps ${extApps.version}, as pinned`);
} else {
  writeFileSync(outJS, js);
  writeFileSync(outLicences, licences);
  console.log(`wrote ${outJS} (${js.length} bytes) and ${outLicences}: ${packages.map((p) => p.name + "@" + p.version).join(", ")}`);
}
