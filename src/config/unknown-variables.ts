import { editDistance } from './config-problems.js';
import { SETTINGS } from './settings.js';

/** Every variable shop-sync reads: each setting's, and `NAME_FILE` for those that may come from a file. */
const KNOWN: readonly string[] = SETTINGS.flatMap((row) =>
  row.env === undefined ? [] : row.fromFile ? [row.env, `${row.env}_FILE`] : [row.env],
);

/**
 * A warning for each environment variable that looks like one of ours but is none (`SYNC_PERPAGE`), with
 * the one it probably meant: a mistyped variable is otherwise silently ignored and its default used.
 * Looks like ours: a few letters from one of ours, or the start of one with the same first word
 * (`OPS_PASS`). The environment holds other programs' variables too, so anything else is left alone.
 */
export function unknownVariableWarnings(env: Readonly<Record<string, string | undefined>>): string[] {
  const known = new Set(KNOWN);
  return Object.keys(env)
    .filter((name) => env[name] !== undefined && !known.has(name))
    .sort()
    .flatMap((name) => {
      const meant = meantVariable(name);
      return meant === undefined
        ? []
        : [`environment variable ${name} is not a shop-sync setting; did you mean ${meant}?`];
    });
}

function meantVariable(name: string): string | undefined {
  const word = name.split('_')[0];
  const completed = KNOWN.find(
    (known) =>
      name.length > (word?.length ?? 0) + 1 && known.startsWith(name) && known.split('_')[0] === word,
  );
  if (completed !== undefined) return completed;
  const closest = KNOWN.map((known) => ({ known, distance: editDistance(name, known) })).sort(
    (a, b) => a.distance - b.distance,
  )[0];
  return closest !== undefined && closest.distance <= Math.max(2, Math.floor(name.length / 4))
    ? closest.known
    : undefined;
}
