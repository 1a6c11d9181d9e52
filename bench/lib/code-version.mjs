// Which code was measured, for the reports: the commit, and whether src/ differed from it
// (read-only git calls; null outside a git checkout). src/ moves between runs, so the report
// names it.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export function codeVersion() {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: here, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    let changed = git('ls-files', '--others', '--exclude-standard', '--', '../../src') !== '';
    try {
      git('diff', '--quiet', 'HEAD', '--', '../../src');
    } catch {
      changed = true;
    }
    return { commit, srcChanged: changed };
  } catch {
    return null;
  }
}

/** ", code at commit abc1234 (with uncommitted changes in src/)" or "". */
export function describeCode(code) {
  return code ? `, code at commit ${code.commit}${code.srcChanged ? ' with uncommitted changes in src/' : ''}` : '';
}
