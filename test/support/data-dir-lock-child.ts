// Test helper of src/db/dialect/data-dir-lock.test.ts: takes the lock, says so, and waits to be killed.
import { lockDataDir } from '../../src/db/dialect/data-dir-lock.js';

lockDataDir(process.argv[2]!);
process.send?.('locked');
setInterval(() => {}, 1000);
