import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | null = null;

/**
 * prom-client's default metrics (CPU, memory, heap spaces, event-loop lag, GC, handles, file
 * descriptors), prefixed `switchyard_`. They describe the process, so they are collected once per
 * process and shared by every Metrics in it: each collection starts an event-loop delay monitor
 * and a GC observer that are never stopped, which tests building many apps would pile up.
 */
export function processMetrics(): Registry {
  if (registry === null) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry, prefix: 'switchyard_' });
  }
  return registry;
}
