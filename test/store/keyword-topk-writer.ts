/** Another process writing the graph, for test/store/keyword-topk.test.ts: `<db> <name> <text>`. */
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

const [path, name, text] = process.argv.slice(2);
if (path === undefined || name === undefined || text === undefined) throw new Error('usage: keyword-topk-writer <db> <name> <text>');
const store = openSqliteStore({ path, vectors: false, keywordTopK: false });
await store.graph.createEntities([{ name, entityType: 'note', observations: [text] }], 5);
await store.graph.addObservations([{ entityName: 'N1', contents: [text] }], 5);
await store.graph.deleteEntities(['N2']);
await store.close();
