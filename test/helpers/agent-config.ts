// The smallest HAProxy config an agent test deploys: an admin socket in the leader's run
// directory, one frontend on `httpPort` with the caller's lines, and backend be_shop on one
// loopback server at `port`, followed by the caller's trailing lines.

export interface AgentConfigParts {
  readonly runDir: string;
  readonly httpPort: number;
  /** be_shop's server port. */
  readonly port: number;
  /** Lines of `frontend web` after its bind, indented as they should appear. */
  readonly frontend: readonly string[];
  /** Lines after backend be_shop. */
  readonly tail?: readonly string[];
}

export function agentConfig(parts: AgentConfigParts): string {
  return [
    'global',
    `    stats socket ${parts.runDir}/admin.sock mode 600 level admin`,
    'defaults',
    '    mode http',
    '    timeout connect 2s',
    '    timeout client 5s',
    '    timeout server 5s',
    'frontend web',
    `    bind *:${parts.httpPort}`,
    ...parts.frontend,
    'backend be_shop',
    `    server s1 127.0.0.1:${parts.port}`,
    ...(parts.tail ?? []),
    '',
  ].join('\n');
}
