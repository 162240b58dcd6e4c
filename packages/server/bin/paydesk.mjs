#!/usr/bin/env node
// The paydesk CLI from the built package (dist/cli.js).
import "../dist/cli.js"
