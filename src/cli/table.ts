import stringWidth from 'string-width';

/** Cells wider than this (in terminal columns) are shortened with `…`: one width, or one per column. */
export type MaxWidth = number | readonly number[];

/**
 * A plain aligned text table for terminals. Cells are flattened to one line (titles may hold
 * newlines and tabs) and long ones are shortened, so every row stays one line. Widths are measured
 * in terminal columns: a CJK character or an emoji takes two.
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth: MaxWidth = 40,
): string[] {
  const limit = (column: number) => (typeof maxWidth === 'number' ? maxWidth : (maxWidth[column] ?? 40));
  const cells = [header, ...rows].map((row) => row.map((cell, column) => shorten(cell, limit(column))));
  const widths = header.map((_, column) => Math.max(...cells.map((row) => stringWidth(row[column] ?? ''))));
  return cells.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : pad(cell, widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** `cell` on one line and at most `maxWidth` terminal columns wide. */
export function shorten(cell: string, maxWidth: number): string {
  const oneLine = cell.replace(/\p{Cc}+/gu, ' ');
  if (stringWidth(oneLine) <= maxWidth) return oneLine;
  let shortened = '';
  for (const { segment } of new Intl.Segmenter().segment(oneLine)) {
    if (stringWidth(`${shortened}${segment}`) > maxWidth - 1) break;
    shortened += segment;
  }
  return `${shortened}…`;
}

function pad(cell: string, width: number): string {
  return cell + ' '.repeat(Math.max(0, width - stringWidth(cell)));
}
