import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { SettingType } from './setting-types.js';

/** One thing wrong with the configuration, naming the setting as the user wrote it. */
export interface Problem {
  readonly setting: string;
  readonly message: string;
}

/**
 * The problems found while loading, reported together: a user fixes them in one go instead of one per
 * start. One problem is its own message; several are listed under a count.
 */
export class Problems {
  private readonly found: Problem[] = [];

  add(setting: string, message: string): void {
    this.found.push({ setting, message });
  }

  /** Runs a check that throws ConfigError (the base URL's rules) and keeps its problem. */
  check(run: () => void): void {
    try {
      run();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.add(error.setting, error.message);
    }
  }

  throwIfAny(): void {
    const [first] = this.found;
    if (first === undefined) return;
    if (this.found.length === 1) throw new ConfigError(first.setting, first.message);
    const list = this.found.map((problem) => `  - ${problem.message}`).join('\n');
    throw new ConfigError(first.setting, `The configuration has ${this.found.length} problems:\n${list}`);
  }
}

const TYPE_NAMES: Readonly<Record<string, string>> = {
  boolean: 'true or false',
  number: 'a number',
  string: 'text',
  array: 'a list',
  object: 'a mapping',
};

/**
 * What is wrong, in our words: a setting's own value is described by what its type expects; a member
 * inside it (a filter) by its schema's message, except where zod would speak for itself (a wrong type).
 */
export function issueText(issue: z.core.$ZodIssue, type: SettingType<unknown>): string {
  if (issue.code === 'custom') return issue.message;
  if (issue.path.length === 0) return `expected ${type.expects}`;
  if (issue.code === 'invalid_type') return `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
  return issue.message;
}

/** The keys an object-valued type knows (a shop's `filters`), for suggestions. */
export function knownKeys(type: SettingType<unknown>): readonly string[] {
  return type.schema instanceof z.ZodObject ? Object.keys(type.schema.shape) : [];
}

/** "did you mean" for a mistyped key, else the keys there are. */
export function unknownKeyHint(key: string, known: readonly string[]): string {
  const closest = known
    .map((candidate) => ({ candidate, distance: editDistance(key.toLowerCase(), candidate) }))
    .sort((a, b) => a.distance - b.distance)[0];
  if (closest && closest.distance <= Math.max(1, Math.floor(key.length / 3)))
    return `did you mean "${closest.candidate}"?`;
  return `known here: ${known.join(', ')}.`;
}

/** Levenshtein distance: insertions, deletions and substitutions. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
