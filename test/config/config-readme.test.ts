import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { SETTINGS, type Setting } from '../../src/config/settings.js';

/**
 * The README's configuration table is the settings table written out: this test renders the rows and
 * holds the README to them, so a setting added, renamed or given a new default fails here until the
 * README says so. The failure's diff is the line to paste.
 */

const HEADER = ['| variable | file key | meaning | default |', '|---|---|---|---|'];

const code = (text: string) => `\`${text}\``;

function variableCell(row: Setting<unknown>): string {
  if (row.env === undefined) return '—';
  return row.fromFile ? `${code(row.env)} (or ${code(`${row.env}_FILE`)})` : code(row.env);
}

function fileKeyCell(row: Setting<unknown>): string {
  if (row.fileKey === undefined) return '—';
  const key = row.scope === 'app' ? row.fileKey : `shops.<name>.${row.fileKey}`;
  const keys = row.topLevelDefault ? `${code(row.fileKey)}, ${code(key)}` : code(key);
  return row.fromFile ? `${keys} (or ${code(`${key}_file`)})` : keys;
}

function defaultCell(row: Setting<unknown>): string {
  if (row.shownDefault !== undefined) return row.shownDefault;
  return row.default === undefined ? 'none' : code(String(row.default));
}

function renderedTable(): string[] {
  const rows = SETTINGS.map(
    (row) => `| ${variableCell(row)} | ${fileKeyCell(row)} | ${row.meaning} | ${defaultCell(row)} |`,
  );
  return [...HEADER, ...rows];
}

function readmeTable(): string[] {
  const lines = readFileSync('README.md', 'utf8').split('\n');
  const start = lines.indexOf(HEADER[0] as string);
  expect(start, 'the README has a configuration table with the expected header').toBeGreaterThan(-1);
  const end = lines.findIndex((line, index) => index > start && !line.startsWith('|'));
  return lines.slice(start, end);
}

it("the README's configuration table is the settings table, row for row", () => {
  expect(readmeTable()).toEqual(renderedTable());
});
