// Import rules over src/ (tests included), checked by `npm run check:deps`: no cycles, and the
// engine's rooms (src/engine/ARCHITECTURE.md) import only downwards. Rooms are matched by folder,
// so a file may move inside its room without touching this file; a new room needs a line here.

// A room's files and everything under it (a room's own folders included).
const room = (...names) => `^src/engine/(?:${names.join('|')})/`;
const ANY_ROOM = '^src/engine/[^/]+/';
// The entry: the Engine and its options (a test beside either counts as the entry too).
const ENTRY = '^src/engine/engine(?:-options)?(?:\\.test)?\\.ts$';
// Every other top-level file of src/engine is shared: execution-store, statuses, step-errors, retention.
const TOP_LEVEL = '^src/engine/[^/]+$';
/** A rule that a room imports no room except its own and those listed. */
function roomImportsOnly(name, allowed, comment) {
  return {
    name: `engine-${name}-room`,
    severity: 'error',
    comment,
    from: { path: room(name) },
    to: { path: ANY_ROOM, pathNot: room(name, ...allowed) },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycle in src/, type-only imports included: a type-only cycle is still two concepts defined in terms of each other; move the shared type or helper into the lower module.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'engine-shared-files',
      severity: 'error',
      comment:
        'The shared top-level files of src/engine (execution-store, statuses, step-errors, retention) import no room and not the entry (engine.ts, engine-options.ts).',
      from: { path: TOP_LEVEL, pathNot: ENTRY },
      to: { path: `${ANY_ROOM}|^src/engine/engine(?:-options)?\\.ts$` },
    },
    {
      name: 'engine-rooms-not-the-entry',
      severity: 'error',
      comment: 'No room of src/engine imports the entry (engine.ts, engine-options.ts): the entry imports the rooms.',
      from: { path: ANY_ROOM },
      to: { path: ENTRY },
    },
    roomImportsOnly('expressions', [], 'engine/expressions/ imports only the shared top-level files of src/engine, no room (not commit/).'),
    roomImportsOnly(
      'commit',
      [],
      'engine/commit/ imports only the shared top-level files of src/engine, no room (not expressions/, run/ or cluster/).',
    ),
    roomImportsOnly('run', ['commit', 'expressions'], 'engine/run/ imports only commit/, expressions/ and the shared files of src/engine.'),
    roomImportsOnly(
      'flights',
      ['run', 'commit', 'expressions'],
      'engine/flights/ imports only run/, commit/, expressions/ and the shared files of src/engine (not local/ or cluster/).',
    ),
    roomImportsOnly(
      'local',
      ['flights', 'run', 'commit', 'expressions'],
      'engine/local/ imports only flights/, run/, commit/, expressions/ and the shared files of src/engine (not cluster/).',
    ),
    roomImportsOnly(
      'cluster',
      ['flights', 'run', 'commit', 'expressions'],
      'engine/cluster/ imports only flights/, run/, commit/, expressions/ and the shared files of src/engine (not local/).',
    ),
    {
      name: 'outside-engine-entry-and-shared-only',
      severity: 'error',
      comment: 'Code outside src/engine imports only engine.ts, engine-options.ts and the shared top-level files, never a room.',
      from: { path: '^src/', pathNot: '^src/engine/' },
      to: { path: ANY_ROOM },
    },
  ],
  options: {
    // Only src/: tests under test/, bench/ and node_modules stay out of the graph.
    includeOnly: '^src/',
    doNotFollow: { path: 'node_modules' },
    // Type-only imports (`import type`, erased by the compiler) count: the rooms' order is about
    // which concept is defined in terms of which, and a type names a concept as much as a value.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
