// Worker entry of the admission webhook: one dedicated thread that holds a replica of the stores
// and answers reviews (admission-checker.ts). The main thread posts store deltas and reviews on
// the parent port in order, so a review always sees every delta posted before it. The template
// set arrives as workerData. A review that throws is answered as failed, never left unanswered.
import { parentPort, workerData } from 'node:worker_threads';
import type { TemplateSetSource } from '../protocol.js';
import type { AdmissionWorkerMessage, AdmissionWorkerReply } from '../admission-protocol.js';
import { AdmissionChecker } from './admission-checker.js';

const port = parentPort;
if (port === null) throw new Error('admission-worker.ts runs as a worker thread');
const checker = new AdmissionChecker((workerData as { templateSet: TemplateSetSource }).templateSet);

port.on('message', (message: AdmissionWorkerMessage) => {
  let reply: AdmissionWorkerReply;
  if (message.kind === 'sync') {
    reply = { kind: 'synced', ack: checker.sync(message.sync) };
  } else {
    try {
      reply = { kind: 'verdict', id: message.id, verdict: checker.review(message.request, message.now) };
    } catch (error) {
      reply = { kind: 'failed', id: message.id, message: error instanceof Error ? error.message : String(error) };
    }
  }
  port.postMessage(reply);
});
