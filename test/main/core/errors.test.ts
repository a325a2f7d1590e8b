// The engine's error classes: a stable `code` to switch on, whether the error is terminal, and
// for PipelineError the phase it failed in, rebuilt on the main thread from plain data.
import { describe, expect, it } from 'vitest';
import { HapticError, PipelineError, TemplateSetError, TemplateSetRejected } from '../../../src/main/core/errors.js';
import type { RenderFailure } from '../../../src/worker/protocol.js';

describe('PipelineError', () => {
  const messages = [
    { phase: 'render', subPhase: undefined, message: 'render failed: boom' },
    { phase: 'render', subPhase: 'helpers', message: 'render failed: boom' },
    { phase: 'validation', subPhase: undefined, message: 'validation failed: boom' },
    { phase: 'validation', subPhase: 'syntax', message: 'validation failed in syntax phase: boom' },
    { phase: 'auxiliary', subPhase: undefined, message: 'validation failed in auxiliary phase: boom' },
    { phase: 'auxiliary', subPhase: 'maps', message: 'validation failed in maps phase: boom' },
  ] as const;

  for (const { phase, subPhase, message } of messages) {
    it(`reads "${message}" for the ${phase} phase${subPhase === undefined ? '' : ` with sub-phase ${subPhase}`}`, () => {
      const error = new PipelineError(phase, 'boom', subPhase);
      expect(error.message).toBe(message);
      expect(PipelineError.format(phase, 'boom', subPhase)).toBe(message);
      expect(error.phase).toBe(phase);
      expect(error.subPhase).toBe(subPhase);
    });
  }

  const codes = [
    { phase: 'render', code: 'RENDER_FAILED' },
    { phase: 'validation', code: 'VALIDATION_FAILED' },
    { phase: 'auxiliary', code: 'AUXILIARY_FAILED' },
  ] as const;

  for (const { phase, code } of codes) {
    it(`has code ${code} and is terminal when the ${phase} phase fails on its inputs`, () => {
      const error = new PipelineError(phase, 'boom');
      expect(error.code).toBe(code);
      expect(error.terminal).toBe(true);
    });
  }

  for (const fault of ['WORKER_FAILED', 'RENDER_TIMEOUT', 'POOL_UNAVAILABLE'] as const) {
    it(`takes the code ${fault} and is not terminal when that fault caused it`, () => {
      const error = new PipelineError('render', 'worker exited', undefined, fault);
      expect(error.code).toBe(fault);
      expect(error.terminal).toBe(false);
      expect(error.phase).toBe('render');
      expect(error.message).toBe('render failed: worker exited');
    });
  }

  it('keeps an Error cause as its cause and takes the cause’s message', () => {
    const cause = new TypeError('undefined is not a function');
    const error = new PipelineError('validation', cause, 'semantic');
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('validation failed in semantic phase: undefined is not a function');
  });

  it('keeps a string cause as its cause', () => {
    expect(new PipelineError('render', 'missing helper').cause).toBe('missing helper');
  });

  it('is an Error and a HapticError named PipelineError', () => {
    const error = new PipelineError('render', 'boom');
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(HapticError);
    expect(error.name).toBe('PipelineError');
    expect(String(error)).toBe('PipelineError: render failed: boom');
  });

  describe('fromFailure', () => {
    /** A failure as it arrives from a worker: structured-cloned plain data. */
    function crossed(failure: RenderFailure): RenderFailure {
      return structuredClone(failure);
    }

    it('rebuilds the error of a failure that crossed the thread boundary as plain data', () => {
      const failure = crossed({ ok: false, phase: 'validation', subPhase: 'syntax', message: 'line 3: unknown keyword', warnings: [], threadId: 4 });
      const error = PipelineError.fromFailure(failure);

      expect(error).toBeInstanceOf(PipelineError);
      expect(error.phase).toBe('validation');
      expect(error.subPhase).toBe('syntax');
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.terminal).toBe(true);
      expect(error.cause).toBe('line 3: unknown keyword');
      expect(error.message).toBe('validation failed in syntax phase: line 3: unknown keyword');
    });

    it('rebuilds a failure without a sub-phase with subPhase undefined', () => {
      const error = PipelineError.fromFailure(crossed({ ok: false, phase: 'render', message: 'missing partial', warnings: [] }));
      expect(error.subPhase).toBeUndefined();
      expect(error.message).toBe('render failed: missing partial');
    });

    it('gives back the same phase, sub-phase and message when an error is sent as data and rebuilt', () => {
      const original = new PipelineError('auxiliary', 'map hosts.map: bad line', 'maps');
      const data = JSON.parse(JSON.stringify({ phase: original.phase, subPhase: original.subPhase, message: String(original.cause) })) as {
        phase: 'auxiliary';
        subPhase: string;
        message: string;
      };
      const rebuilt = PipelineError.fromFailure(data);

      expect({ phase: rebuilt.phase, subPhase: rebuilt.subPhase, code: rebuilt.code, message: rebuilt.message }).toEqual({
        phase: original.phase,
        subPhase: original.subPhase,
        code: original.code,
        message: original.message,
      });
    });
  });
});

describe('TemplateSetError', () => {
  it('names the file in its message and has code TEMPLATE_SET_INVALID', () => {
    const error = new TemplateSetError('sets/custom.yaml', 'invalid YAML at line 4: bad indentation');
    expect(error.message).toBe('sets/custom.yaml: invalid YAML at line 4: bad indentation');
    expect(error.file).toBe('sets/custom.yaml');
    expect(error.code).toBe('TEMPLATE_SET_INVALID');
    expect(error.terminal).toBe(true);
    expect(error.name).toBe('TemplateSetError');
    expect(error).toBeInstanceOf(HapticError);
  });
});

describe('TemplateSetRejected', () => {
  it('says the template set was rejected and has code TEMPLATE_SET_REJECTED', () => {
    const error = new TemplateSetRejected('template haproxyConfig: line 2: missing helper');
    expect(error.message).toBe('template set rejected: template haproxyConfig: line 2: missing helper');
    expect(error.code).toBe('TEMPLATE_SET_REJECTED');
    expect(error.terminal).toBe(true);
    expect(error.name).toBe('TemplateSetRejected');
    expect(error).toBeInstanceOf(HapticError);
  });

  it('is not mistaken for the other error classes', () => {
    const error = new TemplateSetRejected('x');
    expect(error).not.toBeInstanceOf(TemplateSetError);
    expect(error).not.toBeInstanceOf(PipelineError);
  });
});
