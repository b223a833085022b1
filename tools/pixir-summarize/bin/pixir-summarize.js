#!/usr/bin/env node
// Thin launcher: the bundled CLI lives in dist/. Kept as a committed file so that
// package managers can link the bin before the first build.
import { run } from "../dist/main.js";
run();
