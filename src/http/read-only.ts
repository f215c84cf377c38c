/**
 * Read-only tokens. The gate is per tool: a read-only request may call only the tools whose
 * annotations say `readOnlyHint: true` (as each tool declares itself at registration, so a tool
 * added later is writing until it says otherwise); any other call is answered with an isError
 * result naming the tool, without running it. Behind it, the service's writing methods refuse too,
 * in case a reading tool ever wrote. Reads still count as uses (access and co-occurrence signals),
 * as every search does: ranking learns from readers too.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { ERROR_CODES, MemoryError } from '../core/errors.js';
import type { ToolGate } from '../mcp/server.js';
import type { MemoryService } from '../service/memory-service.js';

const refusal = (tool: string, namespace: string): string =>
  `This token is read-only: ${tool} may change namespace "${namespace}", so it was not run and nothing was changed. Use a token made without --read-only (limbic token create --namespace ${namespace}).`;

/** The gate of a read-only token's server instance: tools that do not declare themselves read-only answer with a refusal. */
export function readOnlyGate(namespace: string): ToolGate {
  return (name, annotations): CallToolResult | undefined =>
    annotations?.readOnlyHint === true ? undefined : { content: [{ type: 'text', text: refusal(name, namespace) }], isError: true };
}

/** The service methods that write, and the tool each one backs: refused behind the gate as well. */
const WRITERS: Readonly<Record<string, string>> = {
  createEntities: 'create_entities',
  createRelations: 'create_relations',
  addObservations: 'add_observations',
  deleteEntities: 'delete_entities',
  deleteObservations: 'delete_observations',
  deleteRelations: 'delete_relations',
  setStatus: 'set_entity_status',
  importBatch: 'import',
  reembed: 'reembed',
  optimizeIndexes: 'optimize',
};

/** The maintenance methods that write (service.maintenance), refused the same way. */
const MAINTENANCE_WRITERS: Readonly<Record<string, string>> = {
  supersede: 'add_observations',
  endRelation: 'end_relation',
  executeEntitySplit: 'execute_entity_split',
};
/** The reflection methods that write (service.reflections). */
const REFLECTION_WRITERS: Readonly<Record<string, string>> = { add: 'add_reflection', consolidate: 'run_consolidation' };

export function readOnlyService(service: MemoryService, namespace: string): MemoryService {
  return new Proxy(service, {
    get(target, property, receiver) {
      if (property === 'maintenance') return refusing(target.maintenance, MAINTENANCE_WRITERS, namespace);
      if (property === 'reflections') return refusing(target.reflections, REFLECTION_WRITERS, namespace);
      if (typeof property === 'string' && Object.hasOwn(WRITERS, property)) {
        return () => Promise.reject(new MemoryError(ERROR_CODES.INVALID_INPUT, refusal(WRITERS[property] ?? property, namespace)));
      }
      const value: unknown = Reflect.get(target, property, receiver);
      // Methods run against the real service (its private fields are not on the proxy).
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

function refusing<T extends object>(target: T, writers: Readonly<Record<string, string>>, namespace: string): T {
  return new Proxy(target, {
    get(inner, property, receiver) {
      if (typeof property === 'string' && Object.hasOwn(writers, property)) {
        return () => Promise.reject(new MemoryError(ERROR_CODES.INVALID_INPUT, refusal(writers[property] ?? property, namespace)));
      }
      const value: unknown = Reflect.get(inner, property, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(inner) : value;
    },
  });
}
