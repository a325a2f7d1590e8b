// The template set as `render` and `run` load it for one output directory: the config points at
// the directory's maps/, files/ and certs/, the directory's self-signed default certificate and
// loop-guard token are made (once, kept across renders) and handed to templates as
// `selfSignedCertificate` and `loopGuardToken`, and the user's `--set` / `--set-new` pairs are
// applied last (a `--set` key must be a known value; `--set loopGuardToken=` turns the guard off).
import type { TemplateSetSource } from '../../worker/protocol.js';
import { defaultCertificateFor } from '../output/default-certificate.js';
import { instanceTokenFor } from '../output/instance-token.js';
import { outputPathsIn } from '../output/output-directory.js';
import { DEFAULT_TEMPLATE_SET_PATH, loadTemplateSet } from './template-set.js';
import type { ValueOverrides } from './value-overrides.js';

export async function loadOutputTemplateSet(
  outDir: string,
  file: string = DEFAULT_TEMPLATE_SET_PATH,
  user: ValueOverrides = {},
  extra: Record<string, unknown> = {},
): Promise<TemplateSetSource> {
  const paths = outputPathsIn(outDir);
  const overrides = { mapsDir: paths.mapsDir, filesDir: paths.filesDir, certsDir: paths.certsDir, selfSignedCertificate: '', loopGuardToken: '', ...extra };
  // Loaded once before the certificate and token are made, so a bad set or `--set` leaves nothing behind.
  await loadTemplateSet(file, overrides, user);
  const selfSignedCertificate = await defaultCertificateFor(outDir);
  // A caller's own token (an embedding that shares one across replicas, or '' for none) is kept.
  const loopGuardToken = extra.loopGuardToken ?? (await instanceTokenFor(outDir));
  return loadTemplateSet(file, { ...overrides, selfSignedCertificate, loopGuardToken }, user);
}
