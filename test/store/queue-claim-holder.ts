/**
 * Another process holding embedding jobs, for test/store/embedding-queue.test.ts: `<db> <n>` takes
 * n jobs, prints `taken`, and waits to be killed.
 */
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const [path, n] = process.argv.slice(2);
if (path === undefined || n === undefined) throw new Error('usage: queue-claim-holder <db> <n>');
const store = openSqliteStore({ path });
await store.requireVectors().takeJobs(Number(n));
process.stdout.write('taken\n');
setInterval(() => undefined, 60_000);
