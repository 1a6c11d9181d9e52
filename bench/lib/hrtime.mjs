// The machine's monotonic clock in microseconds: `process.hrtime` in every process and the
// `startTime` of a V8 CPU profile share it, so the parent can mark when it loaded a server and a
// summary of that server's profile can keep exactly those samples (cpu-profiles.mjs).

export const monotonicMicros = () => Number(process.hrtime.bigint() / 1000n);
