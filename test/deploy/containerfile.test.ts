// The container recipe (Containerfile at the repository root) names only real paths: every COPY
// from the build context exists and is not ignored, every COPY from the build stage was made
// there, and the runtime stage holds what the package needs to run (package.json beside templates/,
// the compiled dist/, bin/, production node_modules) with Debian's HAProxy and a non-root user
// that matches the manifests. No container engine runs here: the recipe is checked as text.
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli-process.js';
import { manifestVariants } from '../helpers/kube-manifests.js';
import { podTemplateOf, type Fields } from '../helpers/kube-pods.js';

interface Instruction {
  readonly keyword: string;
  readonly text: string;
  readonly line: number;
}

interface Stage {
  readonly name: string | undefined;
  readonly image: string;
  readonly instructions: Instruction[];
}

/** The stages of a Containerfile: comments dropped, continuation lines joined. */
function parseContainerfile(source: string): Stage[] {
  const stages: Stage[] = [];
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let text = lines[i].trim();
    if (text === '' || text.startsWith('#')) continue;
    while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1).trim()} ${lines[++i].trim()}`;
    const [keyword, ...rest] = text.split(/\s+/);
    const instruction = { keyword: keyword.toUpperCase(), text: rest.join(' '), line: start + 1 };
    if (instruction.keyword === 'FROM') {
      const [image, as, name] = rest;
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (stage === undefined) throw new Error(`Containerfile:${instruction.line}: ${instruction.keyword} before FROM`);
      stage.instructions.push(instruction);
    }
  }
  return stages;
}

interface Copy {
  readonly from: string | undefined;
  readonly sources: string[];
  readonly destination: string;
  readonly line: number;
}

function copies(stage: Stage): Copy[] {
  return stage.instructions
    .filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD')
    .map((i) => {
      const words = i.text.split(/\s+/);
      const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
      const paths = words.filter((w) => !w.startsWith('--'));
      return { from, sources: paths.slice(0, -1), destination: paths.at(-1) ?? '', line: i.line };
    });
}

function workdir(stage: Stage, before: number): string {
  return stage.instructions.filter((i) => i.keyword === 'WORKDIR' && i.line < before).at(-1)?.text ?? '/';
}

/** Whether a .dockerignore pattern list excludes a path of the build context (no negations used). */
function ignored(patterns: readonly string[], path: string): boolean {
  const segments = posix.normalize(path).replace(/\/$/, '').split('/');
  return patterns.some((pattern) => {
    const regex = new RegExp(`^${pattern.replace(/\/$/, '').replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
    return segments.some((_, i) => regex.test(segments.slice(0, i + 1).join('/')));
  });
}

const source = readFileSync(join(REPO_ROOT, 'Containerfile'), 'utf8');
const stages = parseContainerfile(source);
const runtime = stages.at(-1) as Stage;
const ignoreFile = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8');
const ignorePatterns = ignoreFile
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l !== '' && !l.startsWith('#'));

describe('Containerfile', () => {
  it('builds on Node 20 and Debian bookworm in every stage, and the runtime stage is not the build stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toMatch(/^(docker\.io\/(library\/)?)?node:20(\.\d+)*-bookworm(-slim)?(@sha256:[0-9a-f]{64})?$/);
    expect(runtime.name).toBeUndefined();
  });

  it('copies from the build context only paths that exist and that .dockerignore lets through', () => {
    const fromContext = stages.flatMap(copies).filter((c) => c.from === undefined);
    expect(fromContext.length).toBeGreaterThan(3);
    for (const copy of fromContext) {
      for (const path of copy.sources) {
        expect(existsSync(join(REPO_ROOT, path)), `Containerfile:${copy.line}: ${path} exists`).toBe(true);
        expect(ignored(ignorePatterns, path), `Containerfile:${copy.line}: ${path} is excluded by .dockerignore`).toBe(false);
      }
    }
  });

  it('copies from the build stage only what that stage copied in or built (npm ci: node_modules, tsc: the outDir)', () => {
    const outDir = (JSON.parse(readFileSync(join(REPO_ROOT, 'tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string } }).compilerOptions.outDir;
    for (const copy of copies(runtime).filter((c) => c.from !== undefined)) {
      const stage = stages.find((s) => s.name === copy.from);
      expect(stage, `Containerfile:${copy.line}: stage ${String(copy.from)}`).toBeDefined();
      if (stage === undefined) continue;
      const dir = workdir(stage, Number.MAX_SAFE_INTEGER);
      const made = new Set([
        ...copies(stage).flatMap((c) => (c.destination.endsWith('/') ? c.sources.map((s) => posix.join(dir, c.destination, posix.basename(s))) : [posix.join(dir, c.destination)])),
        posix.join(dir, 'node_modules'),
        posix.join(dir, outDir),
      ]);
      for (const path of copy.sources) expect(made, `Containerfile:${copy.line}: ${path}`).toContain(posix.normalize(path));
    }
  });

  it('installs with npm ci, builds, and prunes the dev dependencies before the runtime stage takes node_modules', () => {
    const build = stages.find((s) => s.name === copies(runtime).find((c) => c.sources.some((p) => p.endsWith('node_modules')))?.from);
    expect(build).toBeDefined();
    const runs = (build?.instructions ?? []).filter((i) => i.keyword === 'RUN').map((i) => i.text).join(' && ');
    const order = ['npm ci', 'npm run build', 'npm prune --omit=dev'].map((step) => runs.indexOf(step));
    expect(order.every((at) => at >= 0), runs).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const runtimeRuns = runtime.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.text).join(' ');
    expect(runtimeRuns).not.toMatch(/\bnpm\b/);
    expect(runtimeRuns).toMatch(/apt-get install [^&]*\bhaproxy\b/);
  });

  it('gives the runtime stage what the package needs to run: package.json, templates/, bin/ and the compiled CLI', () => {
    const destinations = copies(runtime).map((c) => posix.join(workdir(runtime, c.line), c.destination));
    const dir = workdir(runtime, Number.MAX_SAFE_INTEGER);
    for (const needed of ['package.json', 'node_modules', 'dist', 'bin', 'templates']) expect(destinations, needed).toContain(posix.join(dir, needed));
    const entrypoint = runtime.instructions.find((i) => i.keyword === 'ENTRYPOINT');
    const command = JSON.parse(entrypoint?.text ?? 'null') as string[];
    expect(command).toEqual(['node', 'bin/haptic-reconciler.js']);
    const bin = readFileSync(join(REPO_ROOT, command[1]), 'utf8');
    const imported = /import '\.\.\/(dist\/[^']+)\.js'/.exec(bin)?.[1];
    expect(imported, 'bin/haptic-reconciler.js imports the compiled CLI').toBeDefined();
    expect(existsSync(join(REPO_ROOT, `${String(imported).replace(/^dist\//, '')}.ts`)), `${String(imported)}.js is compiled from a source file`).toBe(true);
  });

  it('runs as a numeric non-root user, the one the manifests run the pods as', () => {
    const user = runtime.instructions.filter((i) => i.keyword === 'USER').at(-1)?.text ?? '';
    const uid = Number(user.split(':')[0]);
    expect(uid).toBeGreaterThan(0);
    const podUsers = new Set(
      manifestVariants()
        .flatMap((v) => v.documents)
        .flatMap((d) => {
          const spec = podTemplateOf(d.object)?.spec;
          return spec === undefined ? [] : [Number((spec.securityContext as Fields | undefined)?.runAsUser)];
        }),
    );
    expect(podUsers).toEqual(new Set([uid]));
  });

  it('.dockerignore and .containerignore are the same, and keep local node_modules and dist out of the context', () => {
    expect(readFileSync(join(REPO_ROOT, '.containerignore'), 'utf8')).toBe(ignoreFile);
    expect(ignored(ignorePatterns, 'node_modules/x')).toBe(true);
    expect(ignored(ignorePatterns, 'dist')).toBe(true);
    expect(ignored(ignorePatterns, 'src/main/cli/cli.ts')).toBe(false);
  });
});
