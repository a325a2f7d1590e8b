// PipelineError: its message by phase and sub-phase, its cause, and its rebuilding from plain data.
import { describe, expect, it } from 'vitest';
import { PipelineError } from '../../../src/main/pipeline/pipeline.js';

describe('PipelineError', () => {
  it('formats a render failure as "render failed: <cause>"', () => {
    const error = new PipelineError('render', 'missing partial "backends"');
    expect(error.message).toBe('render failed: missing partial "backends"');
    expect(error.phase).toBe('render');
    expect(error.subPhase).toBeUndefined();
  });

  it('formats a validation failure as "validation failed: <cause>"', () => {
    expect(new PipelineError('validation', 'unknown keyword "bogus"').message).toBe('validation failed: unknown keyword "bogus"');
  });

  it('formats a validation failure with a sub-phase as "validation failed in <subPhase> phase: <cause>"', () => {
    const error = new PipelineError('validation', 'server line malformed', 'backend');
    expect(error.message).toBe('validation failed in backend phase: server line malformed');
    expect(error.phase).toBe('validation');
    expect(error.subPhase).toBe('backend');
  });

  it('formats an auxiliary failure as a validation failure in the auxiliary phase', () => {
    expect(new PipelineError('auxiliary', 'map hosts.map is missing').message).toBe('validation failed in auxiliary phase: map hosts.map is missing');
  });

  it('keeps an Error cause as the cause and uses its message', () => {
    const cause = new SyntaxError('Parse error on line 3');
    const error = new PipelineError('render', cause);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('render failed: Parse error on line 3');
  });

  it('keeps a string cause as the cause', () => {
    expect(new PipelineError('validation', 'bad').cause).toBe('bad');
  });

  it('is an Error named PipelineError, recognisable with instanceof', () => {
    const error: unknown = new PipelineError('render', 'x');
    expect(error).toBeInstanceOf(Error);
    expect(error).toBeInstanceOf(PipelineError);
    expect((error as Error).name).toBe('PipelineError');
  });

  it('is rebuilt from the plain failure data that crosses the thread boundary', () => {
    const error = PipelineError.fromFailure({ phase: 'validation', subPhase: 'frontend', message: 'bind missing' });
    expect(error).toBeInstanceOf(PipelineError);
    expect(error.message).toBe('validation failed in frontend phase: bind missing');
    expect(error.subPhase).toBe('frontend');
  });
});
