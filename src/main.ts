#!/usr/bin/env node
import { ConfigError } from './config.js';
import { AppError } from './errors/app-error.js';
import { buildProgram } from './cli/program.js';

/** Entry point of the `switchyard` command: parses the command line and reports failures plainly. */
async function main(): Promise<void> {
  const program = buildProgram(
    process.env,
    (line) => console.log(line),
    (stop) => {
      const shutdown = () => {
        stop().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
  );
  await program.parseAsync(process.argv);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(`configuration error: ${error.message}`);
  else if (error instanceof AppError) console.error(`error: ${error.message}`);
  else console.error(error instanceof Error ? `error: ${error.message}` : error);
  process.exitCode = 1;
});
