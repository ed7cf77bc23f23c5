#!/usr/bin/env node
// npx runs this package's bin: the sweep test's server (../server.mjs).
import "../server.mjs";
