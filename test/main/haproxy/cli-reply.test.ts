// The CLI wire format: escaping, refusing lines that would not be one command, cutting replies
// (captured from HAProxy 2.6.12) into one output per command, and telling failures from successes.
import { describe, expect, it } from 'vitest';
import { checkCommandLine, cliArg, parsePromptReplies, parseSingleReply, replyFailure, severityOf } from '../../../src/main/haproxy/cli-reply.js';

// prompt, set severity-output string, 6 commands, quit — as HAProxy 2.6.12 answered it. The
// `set weight` error has no blank line after it; the prompts still delimit every reply.
const PROMPT_SESSION =
  '\n> \n> ' +
  "[err]: 'set server <srv> state' expects 'ready', 'drain' and 'maint'.\n\n> " +
  '[err]: Empty weight string empty or preceded by garbage\n> ' +
  '\n> ' +
  '\n> ' +
  '0x558d600b7f20 /status ing_ops_status_status_8080\n\n> ' +
  '[info]: Unknown command, but maybe one of the following ones is a better match:\n  help [<command>]  : list matching or all commands\n\n> ';

describe('cliArg', () => {
  it('escapes blanks, semicolons and backslashes so a value stays one argument', () => {
    expect(cliArg('a b;c\\d\te')).toBe('a\\ b\\;c\\\\d\\\te');
    expect(cliArg('example.com/app')).toBe('example.com/app');
  });

  it('refuses a line break, which would start another command', () => {
    expect(() => cliArg('x\nshutdown sessions')).toThrow(TypeError);
  });

  it('escapes a final < so no argument is the payload marker << or ends a line with it', () => {
    expect(cliArg('<<')).toBe('<\\<');
    expect(cliArg('a<<')).toBe('a<\\<');
    expect(cliArg('a<b')).toBe('a<b');
  });
});

describe('checkCommandLine', () => {
  it('accepts an escaped semicolon and refuses a bare one', () => {
    expect(() => checkCommandLine(`add map /m ${cliArg('k;1')} v`, 4096)).not.toThrow();
    expect(() => checkCommandLine('show info; show stat', 4096)).toThrow(/unescaped ';'/);
  });

  it('refuses empty commands, line breaks and lines over the limit', () => {
    expect(() => checkCommandLine('  ', 4096)).toThrow(/empty/);
    expect(() => checkCommandLine('show info\nshow stat', 4096)).toThrow(/one line/);
    expect(() => checkCommandLine(`add map /m k ${'v'.repeat(5000)}`, 4096)).toThrow(/exceeds the 4096-byte line limit/);
  });
});

describe('replies', () => {
  it('cuts an interactive session into one output per command, even where HAProxy omits a blank line', () => {
    const outputs = parsePromptReplies(PROMPT_SESSION, 6, '/run/admin.sock');
    expect(outputs).toHaveLength(6);
    expect(outputs[0]).toMatch(/^\[err\]: 'set server <srv> state'/);
    expect(outputs[1]).toBe('[err]: Empty weight string empty or preceded by garbage');
    expect(outputs[2]).toBe('');
    expect(outputs[3]).toBe('');
    expect(outputs[4]).toBe('0x558d600b7f20 /status ing_ops_status_status_8080');
    expect(outputs[5]).toMatch(/^\[info\]: Unknown command/);
  });

  it('fails a session that ended before every command was answered', () => {
    expect(() => parsePromptReplies('\n> \n> \n> ', 3, '/run/admin.sock')).toThrow(expect.objectContaining({ reason: 'protocol' }));
  });

  it('strips the severity command from a non-interactive reply', () => {
    expect(parseSingleReply('\n1\n# be_id be_name\n\n', '/s')).toBe('1\n# be_id be_name');
    expect(parseSingleReply('\n\n', '/s')).toBe('');
    expect(() => parseSingleReply('Unknown command\n', '/s')).toThrow(/severity-output/);
  });

  it('counts [err], Unknown command and permission errors as failures, warnings and data as success', () => {
    expect(replyFailure('[err]: No such backend.')).toBe('[err]: No such backend.');
    expect(replyFailure('[info]: Unknown command, but maybe one of the following ones is a better match:')).toMatch(/Unknown command/);
    expect(replyFailure('[err]: Permission denied')).toBeDefined();
    expect(replyFailure("[warning]: IP changed from '127.0.0.1' to '127.0.0.5' by 'stats socket command'")).toBeUndefined();
    expect(replyFailure('0x55 shop.example.com/api ing_shop')).toBeUndefined();
    expect(replyFailure('')).toBeUndefined();
    expect(severityOf('[warning]: IP changed')).toBe('warning');
    expect(severityOf('plain')).toBeUndefined();
  });
});
