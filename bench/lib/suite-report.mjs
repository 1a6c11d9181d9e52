// Report pieces the engine and webhook suites share: which process a row measured, and what
// the serve child logged.
import { megabytes } from './report.mjs';

/** "process: serve = ..., in-process = ..." as a short list under the table. */
export function processLegend(processes) {
  return `Process: ${Object.entries(processes)
    .map(([key, label]) => `\`${key}\` = ${label}`)
    .join('; ')}.`;
}

/** A details heading: "3. Database commits per execution" (+ which process, for the extras). */
export function sectionHeading(section) {
  return `${section.number}. ${section.title}${section.process === 'serve' ? '' : ` (${section.process})`}`;
}

/** One paragraph: where serve's log went, how big it got, how the server stopped. */
export function describeServeRun(server) {
  const { log } = server;
  const levels = Object.entries(log.byLevel)
    .map(([level, n]) => `${level} ${n.toLocaleString('en-US')}`)
    .join(', ');
  return `\`switchyard serve\` wrote its stdout and stderr to \`serve.log\` in its temporary data dir
(removed afterwards): ${megabytes(log.bytes)}, ${log.lines.toLocaleString('en-US')} lines over the whole run (pino lines by level: ${levels || 'none'};
${log.errors} errors; ${log.afterStart} plain lines after its start line${log.afterStart ? `, e.g. \`${log.afterStartSamples[0].replaceAll('`', "'")}\`` : ''}). On SIGTERM it exited with code 0 after ${server.shutdownMs.toLocaleString('en-US')} ms.`;
}
