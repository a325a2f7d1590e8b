// Ports this test process has handed out or holds, on any loopback address. HAProxy's own ports
// are refused as endpoints on every loopback address (loopback is HAProxy's host), so an echo
// backend on 127.0.0.2 must never get the port number a test gave HAProxy on 127.0.0.1, nor the
// other way round: both helpers draw ephemeral ports and skip the numbers recorded here.
export const TAKEN_PORTS = new Set<number>();
