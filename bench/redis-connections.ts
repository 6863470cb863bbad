import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The socket inodes process `pid` holds open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      // The descriptor closed between the listing and the look: it holds nothing now.
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode) inodes.add(inode);
  }
  return inodes;
}

/**
 * The TCP connections process `pid` holds established to `port` (Redis'), read from /proc (Linux): what
 * one process costs a Redis whatever else its clients do, where `CLIENT LIST` counts every client of the
 * server, the machine's other users' included.
 */
export function connectionsTo(pid: number, port: number): number {
  const inodes = socketInodes(pid);
  const remote = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  let count = 0;
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      // No IPv6 on this host: no table, no connections in it.
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // rem_address, st (01: established), inode
      if (fields[2]?.endsWith(remote) && fields[3] === '01' && inodes.has(fields[9] ?? '')) count += 1;
    }
  }
  return count;
}
