import { newQuickJSWASMModule, newVariant, RELEASE_SYNC, type QuickJSWASMModule } from 'quickjs-emscripten';

/**
 * The WASM module is loaded once per process (10-20 ms) and shared by every run; runs share
 * nothing else. It is replaced when a host exception inside it (V8's stack overflow) may have
 * left its heap half-updated (`poisoned`), or when its memory grew past `RETIRE_BYTES`
 * (`retired`), so runs start from a small heap again.
 */
export interface ModuleSlot {
  module: Promise<QuickJSWASMModule>;
  memory: WasmMemory;
  /** The run whose code executes now (runs interleave only at `settle`'s yields); growth is charged to it. */
  active: { growBudget: number; memoryExhausted: boolean } | null;
  poisoned: boolean;
  retired: boolean;
}

/** The part of `WebAssembly.Memory` used here (the project's `lib` setting leaves WebAssembly's types out). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
type MemoryClass = new (limits: { initial: number; maximum: number }) => WasmMemory;
const { Memory } = (globalThis as unknown as { WebAssembly: { Memory: MemoryClass } }).WebAssembly;

const PAGE_BYTES = 65_536;
/** The variant's own sizes: 16 MiB to start, 2 GiB at most. */
const INITIAL_PAGES = 256;
const MAX_PAGES = 32_768;
/** A run may also use the free memory earlier runs left, so a module is replaced once it passes this. */
const RETIRE_BYTES = 32 * 1024 * 1024;

let shared: ModuleSlot | undefined;
let modulesLoaded = 0;

export function currentSlot(): ModuleSlot {
  if (shared === undefined || shared.poisoned || shared.retired) shared = loadSlot();
  return shared;
}

export function releaseSlot(slot: ModuleSlot): void {
  if (slot.memory.buffer.byteLength > RETIRE_BYTES) slot.retired = true;
  // The replacement starts loading now, so the next run does not wait for it.
  if (slot === shared && (slot.poisoned || slot.retired)) currentSlot();
}

/**
 * QuickJS's own memory limit cannot count bytes in this build (`malloc_usable_size` is 0 under
 * emscripten, so each block counts as 8 bytes: quickjs-emscripten issues #255 and #271); it only
 * refuses single allocations over the limit. The real limit is here: the module gets a memory
 * of ours whose `grow` refuses to pass the active run's budget, so QuickJS's malloc fails and
 * QuickJS throws its "out of memory" error.
 */
function loadSlot(): ModuleSlot {
  const memory = new Memory({ initial: INITIAL_PAGES, maximum: MAX_PAGES });
  const module = newQuickJSWASMModule(newVariant(RELEASE_SYNC, { wasmMemory: memory as never }));
  const slot: ModuleSlot = { module, memory, active: null, poisoned: false, retired: false };
  const grow = Memory.prototype.grow;
  memory.grow = (pages: number) => {
    const run = slot.active;
    if (run !== null) {
      // emscripten asks for 20%, then 10%, then 5% more than it needs: only the last refusal is final.
      run.memoryExhausted = pages * PAGE_BYTES > run.growBudget;
      if (run.memoryExhausted) throw new RangeError('the code step memory budget is spent');
      run.growBudget -= pages * PAGE_BYTES;
    }
    return grow.call(memory, pages);
  };
  // A failed load is retried by the next run instead of being cached.
  module.catch(() => {
    if (shared === slot) shared = undefined;
  });
  modulesLoaded++;
  return slot;
}

/** For tests: how many WASM modules this process has loaded. */
export function sandboxModulesLoaded(): number {
  return modulesLoaded;
}
