// The benchmark scripts' sections: each benchmark runs on its own, and an error becomes an ERROR
// row (and a failed command) instead of ending the others. BENCH_ONLY=1,5 runs only those
// benchmarks (for a profile of one; results are then not written).

/** A section's rows as an extra (not judged): PASS/FAIL become INFO, the rest stays. */
function asExtra(result) {
  const extra = (row) => ({ ...row, verdict: row.verdict === 'PASS' || row.verdict === 'FAIL' ? 'INFO' : row.verdict });
  return { ...result, rows: result.rows.map(extra), ...(result.commitsRow ? { commitsRow: extra(result.commitsRow) } : {}) };
}

export function createSections() {
  const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map(Number)) : null;
  const state = { sections: [], failed: false, only };
  /**
   * Runs one benchmark against one server. `target`: `{process, label, judged}`; its `process`
   * goes on every row that names none, and the rows of a target that is not judged are extras.
   */
  /** Resolves true when the section ran (BENCH_ONLY may skip it). */
  state.section = async (number, title, measureIt, target = { process: 'serve', label: '', judged: true }) => {
    if (only && !only.has(number)) return false;
    console.log(`\n${number}. ${title}${target.label ? ` (${target.label})` : ''}`);
    const mark = (result) => {
      const marked = target.judged ? result : asExtra(result);
      return {
        ...marked,
        rows: marked.rows.map((row) => ({ process: target.process, ...row })),
        ...(marked.commitsRow ? { commitsRow: { process: target.process, ...marked.commitsRow } } : {}),
      };
    };
    try {
      state.sections.push({ number, title, process: target.process, ...mark(await measureIt()) });
    } catch (error) {
      state.failed = true;
      console.error(`ERROR in ${title} (${target.process}):`, error);
      state.sections.push({
        number,
        title,
        process: target.process,
        rows: [{ process: target.process, benchmark: title, goal: '', measured: `error: ${error.message}`, verdict: 'ERROR' }],
        details: [`Error: ${error.message}`],
        raw: { error: String(error.stack ?? error) },
      });
    }
    return true;
  };
  return state;
}
