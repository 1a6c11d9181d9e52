import SQLite from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { parentPort, workerData } from 'node:worker_threads';
import type { ReaderRequest, ReaderResponse } from './vector-reader.js';

/**
 * The vector reader's thread (see vector-reader.ts): a read-only connection to the server's
 * SQLite file that runs the k-nearest-neighbour scans of sqlite-vec, one request at a time.
 */
const port = parentPort!;
const { file } = workerData as { file: string };
const TABLE = /^knowledge_vectors_\d+$/;

const connection = new SQLite(file, { readonly: true, fileMustExist: true });
connection.pragma('busy_timeout = 5000');
connection.pragma('mmap_size = 1073741824');
sqliteVec.load(connection);
const statements = new Map<string, SQLite.Statement>();

function statementFor(table: string): SQLite.Statement {
  let statement = statements.get(table);
  if (!statement) {
    if (!TABLE.test(table)) throw new Error(`not a vector table: ${table}`);
    statement = connection.prepare(
      `select rowid as seq, distance from ${table} where embedding match ? and k = ? and knowledge_base_id = ?`,
    );
    statements.set(table, statement);
  }
  return statement;
}

port.on('message', (request: ReaderRequest) => {
  let response: ReaderResponse;
  let transfer: ArrayBuffer[] = [];
  try {
    const statement = statementFor(request.table);
    const query = Buffer.from(request.query.buffer, request.query.byteOffset, request.query.byteLength);
    const seqs: number[] = [];
    const distances: number[] = [];
    // One read transaction for all the lists, so they are scanned in one snapshot.
    connection.transaction(() => {
      for (const partition of request.partitions) {
        for (const row of statement.all(query, request.k, partition) as { seq: number | bigint; distance: number }[]) {
          seqs.push(Number(row.seq));
          distances.push(row.distance);
        }
      }
    })();
    const answer = { seqs: Float64Array.from(seqs), distances: Float64Array.from(distances) };
    transfer = [answer.seqs.buffer, answer.distances.buffer];
    response = { id: request.id, ...answer };
  } catch (error) {
    response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(response, transfer);
});
port.postMessage({ ready: true });
