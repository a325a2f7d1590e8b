// Rate limiting (`rate-limit-requests`, `rate-limit-period`, `rate-limit-status-code`): each
// source address may send `requests` requests per `period` to the Ingress; past that HAProxy
// answers with the status code (403 by default, as the HAProxy Ingress Controller does). The
// backend gets a stick-table of its own (100k addresses, the IC's default rate-limit-size), so
// tenants never share counters; past 10 such backends, they share 1,000,000 entries out
// (rate-limit-tables.ts).
import { parseDenyStatus, parseInteger, parseTime, type Parsed } from './values.js';

export const DEFAULT_RATE_LIMIT_PERIOD_MS = 1000;
export const DEFAULT_RATE_LIMIT_STATUS = 403;
const MAX_REQUESTS = 1_000_000;
const MIN_PERIOD_MS = 100;
const MAX_PERIOD_MS = 86_400_000;

export function parseRateLimitRequests(raw: string): Parsed<number> {
  return parseInteger(raw, 1, MAX_REQUESTS);
}

export function parseRateLimitPeriod(raw: string): Parsed<number> {
  return parseTime(raw, MIN_PERIOD_MS, MAX_PERIOD_MS);
}

export function parseRateLimitStatus(raw: string): Parsed<number> {
  return parseDenyStatus(raw);
}
