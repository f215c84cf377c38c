/**
 * What a store upgraded from before the maintenance schema must do with the facts it already held
 * (entity A with 'old fact' created at t0, A knows B): supersede one, end the relation, and keep
 * both in the history. Shared by the SQLite and PostgreSQL upgrade tests.
 */
import { expect } from 'vitest';
import type { MaintenanceStore } from '../../src/store/maintenance-store.js';

export async function expectMaintenanceOnUpgradedFacts(maintenance: MaintenanceStore, t0: number): Promise<void> {
  const [result] = await maintenance.supersede([{ entityName: 'A', contents: ['new fact'], supersedes: 'old fact' }], t0 + 1);
  expect(result).toEqual({ entityName: 'A', addedObservations: ['new fact'], superseded: 'old fact' });
  expect(await maintenance.endRelation({ from: 'A', to: 'B', relationType: 'knows' }, t0 + 2)).toEqual({
    state: 'ended',
    endedAt: t0 + 2,
  });
  const history = await maintenance.history(['A']);
  expect(history.superseded.get('A')).toEqual([
    { content: 'old fact', kind: 'generic', createdAt: t0, supersededAt: t0 + 1, supersededBy: 'new fact' },
  ]);
  expect(history.endedRelations).toEqual([{ from: 'A', to: 'B', relationType: 'knows', endedAt: t0 + 2 }]);
}
