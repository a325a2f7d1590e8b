// The Coordinator's coalescing rule, applied by the bus while the Coordinator is busy rendering.
// When a trigger arrives and the last queued item is a trigger: a coalescible queued trigger is
// replaced by the new one; a non-coalescible one stays and the new one is discarded (it already
// guarantees a render of the latest stores). Gate verdicts are never merged and end a run of
// triggers. So a flood of any size during a render leaves at most one trigger queued.
import type { MergeDecision } from '../bus/event-bus.js';
import type { EventOf } from '../events/events.js';

export type MailboxItem = EventOf<'reconciliation.triggered'> | EventOf<'rendergate.completed'>;

export function mailboxDecision(last: MailboxItem, incoming: MailboxItem): MergeDecision {
  if (incoming.type !== 'reconciliation.triggered' || last.type !== 'reconciliation.triggered') return 'append';
  return last.coalescible ? 'replace' : 'discard';
}
