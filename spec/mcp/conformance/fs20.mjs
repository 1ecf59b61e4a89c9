// fs20.mjs — Node's fs with a stand-in globSync (see node20.mjs).
import fs from "node:fs";
export * from "node:fs";
export default fs;
export function globSync() { throw new Error("fs.globSync needs Node 22"); }
