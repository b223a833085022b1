#!/usr/bin/env node
// Thin launcher: the bundled CLI lives in dist/. CommonJS (bin/package.json), as dist/main.cjs is: Node 20
// starts a CommonJS entry sooner than an ES module (scripts/build.mjs, START_MODULE). Kept as a committed
// file so that package managers can link the bin before the first build.
require("../dist/main.cjs").run();
