/** serve --http redacts every namespace's writes with the redactor it is given (docs/redaction.md). */
import { afterEach, describe, expect, it } from 'vitest';
import { SecretlintRedactor } from '../../src/service/redaction.js';
import { PLANTED } from '../service/redaction-samples.js';
import { connect, startTestServer, textOf, type TestServer } from './http-helpers.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('serve --http and redaction', () => {
  it('redacts a write in any namespace and says so in the answer', async () => {
    server = await startTestServer({}, undefined, undefined, undefined, new SecretlintRedactor());
    const token = PLANTED.find((p) => p.type === 'stripe-key')?.secret ?? '';
    for (const namespace of ['default', 'work']) {
      const client = await connect(server.url, (await server.token(namespace)).token);
      const result = await client.call('create_entities', {
        entities: [{ name: 'Billing', entityType: 'service', observations: [`key ${token}`] }],
      });
      expect(textOf(result)).toContain('key [REDACTED:stripe-key]');
      expect(textOf(result)).toContain('Redacted before storing: 1 stripe-key');
      expect(JSON.stringify(result)).not.toContain(token);
      await client.close();
    }
  });
});
