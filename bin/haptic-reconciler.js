#!/usr/bin/env node
import '../dist/src/main/cli/cli.js';
