import { describe, expect, it } from 'vitest';
import { SandboxContext } from './sandbox-context.js';
import { currentSlot, releaseSlot } from './wasm-module.js';

describe('SandboxContext', () => {
  // The figure is read from a report object made in the context; at the memory limit that
  // object cannot be made, and the run's figure (and the warm cache's 4 MiB bound) must not read 0.
  it('reports the memory used by its heap, the same at the memory limit as below it', async () => {
    const slot = currentSlot();
    try {
      const context = SandboxContext.create(await slot.module, slot);
      try {
        const below = context.memoryUsed();
        expect(below).toBeGreaterThan(10_000);
        expect(context.memoryUsed()).toBe(below);
        context.runtime.setMemoryLimit(1);
        expect(context.memoryUsed()).toBe(below);
        context.runtime.setMemoryLimit(-1);
        const held = context.context.evalCode('globalThis.held = Array.from({ length: 10000 }, (_, i) => ({ i }))');
        held.dispose();
        expect(context.memoryUsed()).toBeGreaterThan(below + 100_000);
      } finally {
        context.dispose();
      }
    } finally {
      releaseSlot(slot);
    }
  });
});
