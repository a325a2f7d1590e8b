// TLS certificates of the routing model: the PEM file of a TLS Secret, taken from the object
// checks (store/tls-material.ts) rather than from the Secret's text, so only a certificate chain
// and key that node:crypto parsed, that match, and that HAProxy's OpenSSL accepts, re-serialised,
// ever reach the output. A Secret that fails those checks is rejected by the guard (scope 'tls'):
// here it reads as missing, and the hosts that use it lose TLS, never the render.
import type { KubeObject } from '../protocol.js';
import { tlsMaterialOf } from '../store/object-guard.js';

/**
 * The checked certificate chain and key of a TLS Secret as one PEM file, or undefined when the
 * Secret has none (no tls.crt / tls.key) or the guard rejected it.
 */
export function pemFromSecret(secret: KubeObject): string | undefined {
  return tlsMaterialOf(secret)?.pem;
}
