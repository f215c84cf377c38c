/**
 * Change notifications of memory://knowledge-graph over stdio, in both protocol generations, against
 * the built binary (issue 28): a 2026-07-28 client opens a subscriptions/listen stream naming the
 * resource, a 2025-era client calls resources/subscribe; either hears of a write made on its own
 * connection, and a 2026-07-28 listener hears nothing of a resource it did not name.
 * (Over HTTP: test/http/http.test.ts.)
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../helpers/fixtures.js';
import { ERAS, stdioClient } from '../helpers/mcp-eras.js';

const GRAPH = 'memory://knowledge-graph';

describe.each(ERAS)('stdio change notifications: $name', ({ era }) => {
  let tmp: ReturnType<typeof tempDir>;
  let client: Client;
  beforeEach(async () => {
    tmp = tempDir('limbic-subscriptions-');
    client = await stdioClient(era, {
      command: process.execPath,
      args: [CLI, '--db', join(tmp.dir, 'memory.db'), '--no-model', 'serve'],
      env: { ...getDefaultEnvironment(), LIMBIC_NAMESPACE: '' },
      stderr: 'ignore',
    });
  });
  afterEach(async () => {
    await client.close();
    tmp.cleanup();
  });

  /** Subscribes the way this generation does; resolves when the server has acknowledged it. */
  const subscribe = async (uris: string[]): Promise<() => Promise<void>> => {
    if (era === 'modern') {
      const subscription = await client.listen({ resourceSubscriptions: uris });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual(uris);
      return () => subscription.close();
    }
    for (const uri of uris) await client.subscribeResource({ uri });
    return async () => {
      for (const uri of uris) await client.unsubscribeResource({ uri });
    };
  };

  it('a write is announced to the connection that subscribed to the graph, and the graph then shows it', async () => {
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const unsubscribe = await subscribe([GRAPH]);
    await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Heard', entityType: 't', observations: [] }] } });
    await expect.poll(() => updates, { timeout: 10_000 }).toContain(GRAPH);
    const read = await client.readResource({ uri: GRAPH });
    const first = read.contents[0];
    expect(first !== undefined && 'text' in first ? first.text : '').toContain('Heard');
    await unsubscribe();
  });

  it('nothing is announced about the graph to a connection that did not ask for it', async () => {
    const updates: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
    const unsubscribe = await subscribe(['memory://something-else']);
    await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Unheard', entityType: 't', observations: [] }] } });
    // A second round trip after the write: a notification sent for it would have arrived before this answer.
    await client.callTool({ name: 'get_statistics', arguments: {} });
    expect(updates).toEqual([]);
    await unsubscribe();
  });
});
