// The Service check. A Service is one unit: a bad port, type or externalName rejects it, and the
// backends that use it get no servers (with a warning), never a broken server line. An
// ExternalName that is an IP literal follows the endpoint address policy. A name the resolver
// would read as an IPv4 address (`2130706433`, `127.1`, `0x7f.1`) is refused outright: HAProxy
// hands it to getaddrinfo past that policy, and the config check refuses some of those forms for
// the whole render. The loopback names of /etc/hosts count as loopback, and the well-known cloud
// metadata names are always refused; any other name that merely resolves to a refused address is
// beyond a static check, which is why routing leaves ExternalName Services out unless
// values.externalNameServices is on (service-backend.ts).
import { isIP } from 'node:net';
import type { KubeObject } from '../protocol.js';
import { addressProblem } from './address-policy.js';
import type { GuardPolicy } from './guard-context.js';
import { isDnsLabel, isDnsSubdomain, isPort, isPortName, isRecord, rejected, type KindOutcome } from './field-rules.js';
import { quote } from './log-text.js';
import { MAX_PORTS } from './value-limits.js';

const SERVICE_TYPES = new Set(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName']);
/** Names /etc/hosts of common distributions points at 127.0.0.1 or ::1. */
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'localhost4', 'localhost4.localdomain4', 'localhost6', 'localhost6.localdomain6', 'ip6-localhost', 'ip6-loopback']);
/** Cloud metadata services by name (GCP; AWS on EC2's resolver); `metadata` alone reaches GCP's through its search domain. */
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'instance-data', 'instance-data.ec2.internal']);
/** A label inet_aton reads as a number: decimal, octal (leading 0) or hex (0x). */
const NUMERIC_LABEL = /^(0x[0-9a-f]*|[0-9]+)$/;
const PROTOCOLS = new Set(['TCP', 'UDP', 'SCTP']);

export function checkService(object: KubeObject, policy: GuardPolicy): KindOutcome {
  const spec = object.spec;
  if (!isRecord(spec)) return rejected('object', `spec is ${quote(spec)}, not a mapping`);
  if (spec.type !== undefined && (typeof spec.type !== 'string' || !SERVICE_TYPES.has(spec.type))) {
    return rejected('object', `spec.type ${quote(spec.type)} must be ClusterIP, NodePort, LoadBalancer or ExternalName`);
  }
  const ports = spec.ports ?? [];
  if (!Array.isArray(ports)) return rejected('object', `spec.ports is ${quote(ports)}, not a list`);
  if (ports.length > MAX_PORTS) return rejected('object', `spec.ports has ${ports.length} entries, over the limit of ${MAX_PORTS}`);
  for (let i = 0; i < ports.length; i++) {
    const port: unknown = ports[i];
    const at = `spec.ports[${i}]`;
    if (!isRecord(port)) return rejected('object', `${at} is ${quote(port)}, not a mapping`);
    if (!isPort(port.port)) return rejected('object', `${at}.port ${quote(port.port)} is not a port number`);
    if (port.name !== undefined && port.name !== '' && !isDnsLabel(port.name)) return rejected('object', `${at}.name ${quote(port.name)} is not a valid port name`);
    if (port.targetPort !== undefined && !isPort(port.targetPort) && !isPortName(port.targetPort)) {
      return rejected('object', `${at}.targetPort ${quote(port.targetPort)} is neither a port number nor a port name`);
    }
    if (port.protocol !== undefined && (typeof port.protocol !== 'string' || !PROTOCOLS.has(port.protocol))) {
      return rejected('object', `${at}.protocol ${quote(port.protocol)} must be TCP, UDP or SCTP`);
    }
  }
  if (spec.type === 'ExternalName' || spec.externalName !== undefined) {
    const name = spec.externalName;
    if (isIP(typeof name === 'string' ? name : '') !== 0 || (typeof name === 'string' && name.includes('%'))) {
      const problem = addressProblem(name as string, ports.map((p) => (p as { port: number }).port), policy);
      if (problem !== null) return rejected('endpoint', `spec.externalName ${quote(name)} ${problem}`);
    } else if (!isDnsSubdomain(name)) {
      return rejected('object', `spec.externalName ${quote(name)} is not a valid DNS name`);
    } else if (name.split('.').every((label) => NUMERIC_LABEL.test(label))) {
      return rejected('endpoint', `spec.externalName ${quote(name)} reads as an IPv4 address, not a name; write the address as a.b.c.d`);
    } else if (METADATA_NAMES.has(name)) {
      return rejected('endpoint', `spec.externalName ${quote(name)} is a cloud metadata name`);
    } else if (isLoopbackName(name) && !policy.allowLoopbackEndpoints) {
      return rejected('endpoint', `spec.externalName ${quote(name)} is a loopback name (set values.allowLoopbackEndpoints to allow it)`);
    }
  }
  return { dropped: [] };
}

/** `localhost`, a name under it, or another name /etc/hosts gives a loopback address. */
export function isLoopbackName(name: string): boolean {
  return LOOPBACK_NAMES.has(name) || name.endsWith('.localhost');
}
