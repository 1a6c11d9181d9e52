// The benchmark scripts' sections: each benchmark runs on its own, and an error becomes an ERROR
// row (and a failed command) instead of ending the others. BENCH_ONLY=1,5 runs only those
// benchmarks (for a profile of one; results are then not written).

export function createSections() {
  const only = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map(Number)) : null;
  const state = { sections: [], failed: false, only };
  state.section = async (number, title, measureIt) => {
    if (only && !only.has(number)) return;
    console.log(`\n${number}. ${title}`);
    try {
      state.sections.push({ number, title, ...(await measureIt()) });
    } catch (error) {
      state.failed = true;
      console.error(`ERROR in ${title}:`, error);
      state.sections.push({ number, title, rows: [{ benchmark: title, goal: '', measured: `error: ${error.message}`, verdict: 'ERROR' }], details: [`Error: ${error.message}`], raw: { error: String(error.stack ?? error) } });
    }
  };
  return state;
}
