// Factories for the events the tests publish.
import { newEvent, type ChangeStats, type EventFields, type EventOf } from '../../src/main/events/events.js';

export function resourceUpdated(
  resourceTypeName = 'ingresses',
  changeStats: Partial<ChangeStats> = {},
): EventOf<'resource.index.updated'> {
  return newEvent('resource.index.updated', {
    resourceTypeName,
    changeStats: { created: 0, modified: 1, deleted: 0, isInitialSync: false, ...changeStats },
  });
}

export function trigger(reason = 'resource_change', coalescible = true): EventOf<'reconciliation.triggered'> {
  return newEvent('reconciliation.triggered', { reason, coalescible });
}

export function verdict(
  renderId: string,
  fields: Partial<EventFields['rendergate.completed']> = {},
): EventOf<'rendergate.completed'> {
  return newEvent('rendergate.completed', {
    renderId,
    ok: true,
    refused: false,
    newest: true,
    message: '',
    durationMs: 5,
    ...fields,
  });
}
