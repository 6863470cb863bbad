/**
 * "EACCES permission denied" from "EACCES: permission denied, open '/x/.inventory.csv.1.ab.tmp'":
 * the code and the reason, without the temporary file's name.
 */
export function describeCause(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.split('\n')[0] ?? message;
  if (!code) return firstLine;
  const prefix = `${code}: `;
  const reason = firstLine.startsWith(prefix) ? firstLine.slice(prefix.length).split(', ')[0] : firstLine;
  return `${code} ${reason}`;
}
