import Database from 'better-sqlite3';

const db = new Database(process.argv[2], { readonly: true });
for (let i = 0; i < 2; i++) {
  const t = process.hrtime.bigint();
  const c = process.cpuUsage();
  const r = db.pragma('quick_check', { simple: true });
  const cpu = process.cpuUsage(c);
  console.log(
    r,
    Number(process.hrtime.bigint() - t) / 1e6,
    'ms wall',
    (cpu.user + cpu.system) / 1000,
    'ms cpu',
  );
}
