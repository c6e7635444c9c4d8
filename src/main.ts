#!/usr/bin/env bun
/** Entry point of the executable: the command line (serve is the default command). */
import { runCli } from './cli/commands';

const code = await runCli(process.argv.slice(2));
if (code !== 0) process.exit(code);
