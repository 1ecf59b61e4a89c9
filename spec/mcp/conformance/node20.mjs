// node20.mjs — lets the conformance suite load on Node 20. Its bundle
// imports `globSync` from "fs" (Node 22), used only by its tier-check
// command, which this project never runs. Loaded with
// `node --import ./conformance/node20.mjs`, it sends the bundle's "fs"
// to fs20.mjs: Node's fs plus a globSync that throws. Does nothing on
// Node 22 and later. Both pinned suites need it (0.1.16, and 0.2.0-alpha.12
// installed as @modelcontextprotocol/conformance-2026).
import fs from "node:fs";
import { register } from "node:module";

if (!fs.globSync) register("./node20.mjs", import.meta.url);

export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") &&
      context.parentURL && /\/@modelcontextprotocol\/conformance(-2026)?\//.test(context.parentURL))
    return { url: new URL("./fs20.mjs", import.meta.url).href, shortCircuit: true };
  return next(specifier, context);
}
