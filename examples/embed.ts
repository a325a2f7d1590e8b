// Embedding the engine: watch a manifest directory and keep an output directory current, with the
// default template set. The README shows this file; test/e2e/embedding.test.ts runs it.
//   npx tsx examples/embed.ts MANIFEST_DIR OUT_DIR
import { Engine, ManifestSource, OutputDirectory, OutputWriter, defaultLogger, loadOutputTemplateSet, systemClock } from '../src/main/index.js';
// From the published package: import { Engine, ... } from 'haptic-reconciler';

const [manifests = 'examples/local', out = 'out/embed'] = process.argv.slice(2);
const logger = defaultLogger();

// The bundled set, its maps/, files/ and certs/ paths pointing into `out`.
const templateSet = await loadOutputTemplateSet(out);
const engine = await Engine.create({
  templateSet,
  sources: [new ManifestSource({ dir: manifests, clock: systemClock, logger })],
  logger,
});
// Leader-only components start with each leadership term and stop when it ends.
engine.addLeaderComponent(new OutputWriter({ bus: engine.bus, directory: new OutputDirectory(out), clock: engine.clock, logger }));

const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
process.once('SIGINT', () => stop.abort());
await engine.start(stop.signal); // returns once stopped
await engine.close();
