// Preloaded (node --require) before a vendored reference server: every listen() that names no host
// binds 127.0.0.1, so nothing a test starts is reachable from outside the machine.
'use strict';
const net = require('net');
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function patched(...args) {
  if (typeof args[0] === 'number' || (typeof args[0] === 'string' && /^\d+$/.test(args[0]))) {
    const port = Number(args[0]);
    const rest = args.slice(1).filter((a) => typeof a === 'function');
    return listen.call(this, port, '127.0.0.1', ...rest);
  }
  if (args[0] && typeof args[0] === 'object' && !args[0].path) {
    args[0] = { ...args[0], host: '127.0.0.1' };
  }
  return listen.apply(this, args);
};
