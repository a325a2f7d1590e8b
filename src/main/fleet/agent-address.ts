// `--agents HOST:PORT[,HOST:PORT…]`, parsed: IPv4, [IPv6] or a DNS name, and a port 1-65535. A
// malformed entry is a TypeError that names it, so `run` stops at start instead of deploying to
// a fleet it misread.
import { isIP } from 'node:net';
import type { AgentEndpoint } from './agent-client.js';

const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function parseAgentAddresses(text: string): AgentEndpoint[] {
  const entries = text.split(',').map((entry) => entry.trim());
  const endpoints = entries.map(parseAgentAddress);
  const seen = new Set<string>();
  for (const [i, endpoint] of endpoints.entries()) {
    const key = `${endpoint.host}:${endpoint.port}`;
    if (seen.has(key)) throw new TypeError(`--agents lists ${JSON.stringify(entries[i])} twice`);
    seen.add(key);
  }
  return endpoints;
}

export function parseAgentAddress(entry: string): AgentEndpoint {
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(entry);
  const plain = bracketed === null ? /^([^:[\]]+):(\d{1,5})$/.exec(entry) : null;
  const match = bracketed ?? plain;
  const host = match?.[1] ?? '';
  const port = Number(match?.[2]);
  const hostOk = bracketed !== null ? isIP(host) === 6 : isIP(host) === 4 || (isIP(host) === 0 && DNS_NAME.test(host) && !/^[\d.]+$/.test(host));
  if (match === null || !hostOk || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new TypeError(`--agents: ${JSON.stringify(entry)} is not HOST:PORT (an IPv4 address, [IPv6] or a DNS name, and a port 1-65535)`);
  }
  return { host, port };
}

/** 127.0.0.0/8, ::1 and localhost: private keys may go there in clear. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}
