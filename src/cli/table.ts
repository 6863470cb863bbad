/**
 * A plain aligned text table for terminals. Cells are flattened to one line (titles may hold
 * newlines and tabs) and long ones are shortened, so every row stays one line.
 */
export function formatTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  maxWidth = 40,
): string[] {
  const cells = [header, ...rows].map((row) => row.map((cell) => flatten(cell, maxWidth)));
  const widths = header.map((_, column) => Math.max(...cells.map((row) => [...(row[column] ?? '')].length)));
  return cells.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : pad(cell, widths[column] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

function flatten(cell: string, maxWidth: number): string {
  const oneLine = cell.replace(/\p{Cc}+/gu, ' ');
  const chars = [...oneLine];
  return chars.length > maxWidth ? `${chars.slice(0, maxWidth - 1).join('')}…` : oneLine;
}

function pad(cell: string, width: number): string {
  return cell + ' '.repeat(Math.max(0, width - [...cell].length));
}
