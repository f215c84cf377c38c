/**
 * Child process of test/capture/export-stream.test.ts: reads an export with readConversations and
 * prints what it read as JSON, so the test can run it under a small heap (--max-old-space-size).
 */
import { detectFormat, readConversations } from '../../src/capture/readers/formats.js';

const path = process.argv[2] ?? '';
let conversations = 0;
let turns = 0;
for await (const item of readConversations(path, await detectFormat(path))) {
  if (item.kind === 'conversation') {
    conversations++;
    turns += item.conversation.turns.length;
  }
}
process.stdout.write(`${JSON.stringify({ conversations, turns })}\n`);
