// A versioned map replacement over the Runtime API: `prepare map` hands out a version, the entries
// go to that version in payload commands (versionedMapCommands), and `commit map` publishes it
// only after HAProxy accepted every entry, on its own connection: HAProxy runs the rest of a
// connection's commands after one fails, so a commit sent with the entries could publish a
// version that lacks some. An uncommitted version never matches, and the next commit of a later
// version purges it (the Deployer's remedy for a failure, a reload, starts afresh anyway).
import { prepareMapCommand, preparedMapVersion, versionedMapCommands, type MapReplaceOp } from '../deploy/runtime-ops.js';
import type { RuntimeApi } from './runtime-api.js';

/** @throws RuntimeCommandError (nothing committed) when HAProxy refuses an entry; HaproxyCliError when it cannot be reached. */
export async function replaceMap(api: RuntimeApi, op: MapReplaceOp, signal?: AbortSignal): Promise<void> {
  const version = preparedMapVersion((await api.send(prepareMapCommand(op), signal)).output);
  const { adds, commit } = versionedMapCommands(op, version, api.maxPayloadBytes);
  await api.sendBatch(adds, signal);
  await api.send(commit, signal);
}
