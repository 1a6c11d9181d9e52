import { MAX_NODE_ID_LENGTH } from '../../graph/parse-node.js';

/**
 * Switchyard node ids for n8n node names: readable slugs (`Fetch Order` -> `fetch_order`), so
 * expressions read `nodes.fetch_order`; the n8n node id (a UUID) when the name has no letter or
 * digit this alphabet allows (`错误处理`), else `node_<n>`; `_2`, `_3`, … when taken.
 */
export function assignIds(names: Array<{ name: string; id: string | null }>, taken: Set<string> = new Set()): Map<string, string> {
  const ids = new Map<string, string>();
  names.forEach(({ name, id }, index) => {
    let base = name
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 60);
    if (base === '') base = id !== null && /^[A-Za-z0-9_-]{1,60}$/.test(id) ? id : `node_${index + 1}`;
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) candidate = `${base}_${n}`.slice(0, MAX_NODE_ID_LENGTH);
    taken.add(candidate);
    ids.set(name, candidate);
  });
  return ids;
}
