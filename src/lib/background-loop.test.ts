import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackgroundLoop, type BackgroundTask } from './background-loop.js';

/** A task that handles what is queued for it, at most `batch` a run, and records its runs. */
function queueTask(name: string, batch?: number) {
  const state = { queued: 0, runs: 0 };
  const task: BackgroundTask = {
    name,
    ...(batch === undefined ? {} : { batch }),
    run: async () => {
      state.runs += 1;
      const taken = Math.min(state.queued, batch ?? 1);
      state.queued -= taken;
      return taken;
    },
  };
  return { task, state };
}

describe('background loop', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs only the task a poke names; the start and the poll run every task', async () => {
    vi.useFakeTimers();
    const embed = queueTask('embed', 16);
    const compact = queueTask('compact', 8);
    const loop = new BackgroundLoop([embed.task, compact.task], { pollMs: 1000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect([embed.state.runs, compact.state.runs]).toEqual([1, 1]);
    embed.state.queued = 3;
    loop.poke('embed');
    await vi.advanceTimersByTimeAsync(0);
    // Three of a batch of 16: everything due was taken, so one run, and the other task not at all.
    expect([embed.state.runs, compact.state.runs, embed.state.queued]).toEqual([2, 1, 0]);
    await vi.advanceTimersByTimeAsync(1000);
    expect([embed.state.runs, compact.state.runs]).toEqual([3, 2]);
    await loop.stop();
  });

  it('runs a task again while it fills its batch, or was poked while it ran', async () => {
    vi.useFakeTimers();
    const embed = queueTask('embed', 2);
    const loop = new BackgroundLoop([embed.task], { pollMs: 60_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    embed.state.queued = 5;
    loop.poke('embed');
    await vi.advanceTimersByTimeAsync(0);
    // 2 + 2 + 1: the third run took less than a batch.
    expect([embed.state.runs - 1, embed.state.queued]).toEqual([3, 0]);

    let poked = false;
    const original = embed.task.run;
    embed.task.run = async (signal) => {
      const handled = await original(signal);
      if (!poked) {
        poked = true;
        embed.state.queued = 1;
        loop.poke('embed');
      }
      return handled;
    };
    const before = embed.state.runs;
    loop.poke('embed');
    await vi.advanceTimersByTimeAsync(0);
    expect([embed.state.runs - before, embed.state.queued]).toEqual([2, 0]);
    await loop.stop();
  });

  it('without a batch size, runs a task until it handles nothing', async () => {
    vi.useFakeTimers();
    const plain = queueTask('plain');
    const loop = new BackgroundLoop([plain.task], { pollMs: 60_000 });
    plain.state.queued = 3;
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect([plain.state.runs, plain.state.queued]).toEqual([4, 0]);
    await loop.stop();
  });

  it('with gatherMs, pokes within the window start one pass that takes all their work', async () => {
    vi.useFakeTimers();
    const embed = queueTask('embed', 16);
    const loop = new BackgroundLoop([embed.task], { pollMs: 60_000, gatherMs: 20 });
    loop.start();
    await vi.advanceTimersByTimeAsync(20);
    const before = embed.state.runs;
    for (let i = 0; i < 4; i++) {
      embed.state.queued += 1;
      loop.poke('embed');
      await vi.advanceTimersByTimeAsync(4);
    }
    expect(embed.state.runs).toBe(before);
    await vi.advanceTimersByTimeAsync(10);
    expect([embed.state.runs - before, embed.state.queued]).toEqual([1, 0]);
    await loop.stop();
  });

  it('drain runs every task until none handles anything, poked or not', async () => {
    const embed = queueTask('embed', 2);
    const compact = queueTask('compact', 8);
    const loop = new BackgroundLoop([embed.task, compact.task]);
    embed.state.queued = 5;
    compact.state.queued = 1;
    await loop.drain();
    expect([embed.state.queued, compact.state.queued]).toEqual([0, 0]);
  });
});
