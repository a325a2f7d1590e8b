// Type-level tests of the event catalogue: run by `vitest` (typecheck mode) and by `tsc --noEmit`.
import { assertType, describe, expectTypeOf, test } from 'vitest';
import {
  type EVENT_TYPES,
  newEvent,
  type ControllerEvent,
  type EventEnvelope,
  type EventFields,
  type EventOf,
  type EventType,
} from '../../../src/main/events/events.js';

/** Handles every event type; the `never` default only compiles when no case is missing. */
function summarize(event: ControllerEvent): string {
  switch (event.type) {
    case 'resource.index.updated':
      return `${event.resourceTypeName} +${event.changeStats.created}`;
    case 'index.synchronized':
      return Object.keys(event.resourceCounts).join(',');
    case 'http.resource.updated':
      return event.url;
    case 'http.resource.accepted':
      return event.checksum;
    case 'drift.prevention.triggered':
      return String(event.timeSinceLastDeploymentMs);
    case 'leader.became':
      return event.identity;
    case 'leader.lost':
      return event.reason;
    case 'reconciliation.triggered':
      return `${event.reason}:${String(event.coalescible)}`;
    case 'reconciliation.started':
      return event.trigger;
    case 'template.rendered':
      return `${event.renderId} ${event.auxiliaryFiles.maps['x'] ?? ''}`;
    case 'reconciliation.failed':
      return `${event.phase} ${event.subPhase ?? ''}`;
    case 'reconciliation.completed':
      return event.outcome;
    case 'rendergate.completed':
      return String(event.refused);
    case 'deployment.completed':
      return `${event.kind} ${event.outcome} ${event.error ?? ''}`;
    default: {
      const unreachable: never = event;
      return unreachable;
    }
  }
}

/** Forgets `deployment.completed`: the `never` assignment in the default must not compile. */
function summarizeMissingACase(event: ControllerEvent): string {
  switch (event.type) {
    case 'resource.index.updated':
    case 'index.synchronized':
    case 'http.resource.updated':
    case 'http.resource.accepted':
    case 'drift.prevention.triggered':
    case 'leader.became':
    case 'leader.lost':
    case 'reconciliation.triggered':
    case 'reconciliation.started':
    case 'template.rendered':
    case 'reconciliation.failed':
    case 'reconciliation.completed':
    case 'rendergate.completed':
      return event.type;
    default: {
      // @ts-expect-error -- `event` is still `deployment.completed` here, which is not assignable to never
      const unreachable: never = event;
      return unreachable;
    }
  }
}

/** The types that occur more than once in a tuple (never when all are distinct). */
type Duplicates<T extends readonly unknown[]> = T extends readonly [infer Head, ...infer Rest]
  ? (Head extends Rest[number] ? Head : never) | Duplicates<Rest>
  : never;

type ListedType = (typeof EVENT_TYPES)[number];

describe('ControllerEvent', () => {
  test('a switch over every type with a never default is exhaustive', () => {
    expectTypeOf(summarize).parameter(0).toEqualTypeOf<ControllerEvent>();
    expectTypeOf(summarize).returns.toEqualTypeOf<string>();
  });

  test('a switch missing a case fails to compile at its never default', () => {
    // The proof is the @ts-expect-error inside summarizeMissingACase: if the missing case ever
    // type-checked, that directive would be unused and compilation would fail.
    expectTypeOf(summarizeMissingACase).parameter(0).toEqualTypeOf<ControllerEvent>();
    expectTypeOf<Exclude<ControllerEvent['type'], 'deployment.completed'>>().not.toEqualTypeOf<EventType>();
  });

  test('is discriminated on type: each member carries its own fields plus the envelope', () => {
    expectTypeOf<ControllerEvent['type']>().toEqualTypeOf<EventType>();
    expectTypeOf<EventOf<'template.rendered'>['type']>().toEqualTypeOf<'template.rendered'>();
    expectTypeOf<EventOf<'template.rendered'>>().toMatchTypeOf<EventEnvelope & EventFields['template.rendered']>();
    expectTypeOf<EventOf<'reconciliation.failed'>['phase']>().toEqualTypeOf<'render' | 'validation' | 'auxiliary'>();
    expectTypeOf<EventOf<'reconciliation.failed'>['subPhase']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<EventOf<'reconciliation.triggered'>>().not.toHaveProperty('renderId');
    expectTypeOf<EventOf<'leader.became' | 'leader.lost'>['type']>().toEqualTypeOf<'leader.became' | 'leader.lost'>();
  });

  test('events are read-only', () => {
    const event = newEvent('reconciliation.triggered', { reason: 'resource_change', coalescible: true });
    expectTypeOf(event).toEqualTypeOf<EventOf<'reconciliation.triggered'>>();
    // @ts-expect-error -- event fields are readonly
    event.reason = 'other';
    // @ts-expect-error -- envelope fields are readonly
    event.correlationId = 'other';
  });
});

describe('EVENT_TYPES', () => {
  test('covers exactly keyof EventFields', () => {
    expectTypeOf<ListedType>().toEqualTypeOf<keyof EventFields>();
    // Dropping any one listed type breaks the equality, so the check above is not vacuous.
    expectTypeOf<Exclude<ListedType, 'leader.lost'>>().not.toEqualTypeOf<keyof EventFields>();
  });

  test('lists no type twice', () => {
    expectTypeOf<Duplicates<typeof EVENT_TYPES>>().toBeNever();
    expectTypeOf<Duplicates<readonly ['a', 'b', 'a']>>().toEqualTypeOf<'a'>();
  });
});

describe('newEvent', () => {
  test('takes exactly the fields of its type and returns that event', () => {
    expectTypeOf(newEvent<'leader.lost'>).returns.toEqualTypeOf<EventOf<'leader.lost'>>();
    expectTypeOf(newEvent<'leader.lost'>).parameter(1).toEqualTypeOf<EventFields['leader.lost']>();
    assertType<EventFields['reconciliation.triggered']>({ reason: 'resource_change', coalescible: true });
    // @ts-expect-error -- coalescible is required
    assertType<EventFields['reconciliation.triggered']>({ reason: 'resource_change' });
    // @ts-expect-error -- unknown event type
    newEvent('reconciliation.exploded', {});
    // @ts-expect-error -- fields of another type
    newEvent('leader.became', { url: 'http://x', checksum: 'c', contentSize: 1 });
  });

  test('accepts any object with eventId and correlationId as a cause', () => {
    const cause = newEvent('leader.became', { identity: 'a' });
    expectTypeOf(newEvent('leader.lost', { identity: 'a', reason: 'r' }, cause)).toEqualTypeOf<EventOf<'leader.lost'>>();
    assertType<Parameters<typeof newEvent>[2]>({ eventId: 'e', correlationId: 'c' });
  });
});
